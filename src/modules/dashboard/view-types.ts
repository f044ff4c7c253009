import type { formState } from './form-errors.js';

/**
 * Types the pages' view models share, kept apart from what draws them: a page's view.ts imports
 * nothing that imports context.ts, so page-views.ts (which context.ts reads) closes no cycle.
 */

/** What a page with a form draws about its refusal: each field's words, its attributes, and the summary. */
export type FormState = ReturnType<typeof formState>;

/** "Partially refunded · 50.00 of 125.00 MRU" for a paid and a refunded amount, or nothing. */
export type RefundNote = (paid: number | null, refunded: number) => string | undefined;
