import type { formState } from './form-errors.js';

/** What a page with a form draws about its refusal: each field's words, its attributes, and the summary. */
export type FormState = ReturnType<typeof formState>;
