import { ApiError, errorCatalogue, type ErrorCode, type ErrorDetail } from '../../http/errors.js';
import type { DashboardPage, Dictionary } from './i18n.js';

/** The texts a field's refusal may say on a page: the page's own `field…` words and the shared ones. */
type FieldText<Page extends DashboardPage> = Extract<keyof Dictionary<Page>, `field${string}`>;

/**
 * How a form names the fields its refusals are about: the API error's detail names a field
 * (`body.amount`, `variants.1.priceAdjustment`); the first pattern matching it gives the form
 * field (the detail's own name without `body.`, unless `as` renames it) and the text shown next
 * to it. An error without details can still be about one field (`codes`).
 */
export interface FormFields<Page extends DashboardPage> {
  fields: { pattern: RegExp; text: FieldText<Page>; as?: string }[];
  codes?: Partial<Record<ErrorCode, { field: string; text: FieldText<Page> }>>;
}

/** A refusal as a redrawn form shows it: a text per field, and the line above the form. */
export interface Refusal {
  problems: Record<string, string>;
  error: string;
}

/** Whether a refusal is about what was typed in the form (else the page it came from says it). */
export function isAboutForm<Page extends DashboardPage>(error: ApiError, form: FormFields<Page>): boolean {
  return error.code === 'VALIDATION_ERROR' || form.codes?.[error.code] !== undefined;
}

export function refusalOf<Page extends DashboardPage>(
  error: ApiError,
  t: Dictionary<Page>,
  form: FormFields<Page>,
): Refusal {
  const problems: Record<string, string> = {};
  for (const detail of error.details ?? []) {
    const name = detail.field.replace(/^body\./, '');
    const rule = form.fields.find((candidate) => candidate.pattern.test(name));
    if (!rule) continue;
    // "is required" is the same refusal whatever the field: say so rather than its format.
    const text = /^is required\b/.test(detail.message) ? 'fieldRequired' : rule.text;
    problems[rule.as ?? name] = t[text];
  }
  const byCode = form.codes?.[error.code];
  if (byCode) problems[byCode.field] = t[byCode.text];
  const error_ = Object.keys(problems).length > 0 ? t.checkFields : errorCatalogue[error.code].message;
  return { problems, error: error_ };
}

/** A field's message id and invalid state, as attributes of its input (`<%~ it.invalid('amount') %>`). */
export function invalidAttributes(problems: Record<string, string>) {
  return (field: string): string =>
    problems[field] ? ` aria-invalid="true" aria-describedby="${errorId(field)}"` : '';
}

/** The id of a field's message: field names are the form's own (letters, digits, dots). */
export function errorId(field: string): string {
  return `error-${field.replace(/[^A-Za-z0-9-]/g, '-')}`;
}

/**
 * What a form's template needs to draw refusals: the texts per field, the attributes of an
 * invalid input, the ids of the messages, and (when redrawn after a refusal) the line above.
 */
export function formState(refusal?: Refusal) {
  const problems = refusal?.problems ?? {};
  return {
    problems,
    invalid: invalidAttributes(problems),
    errorId,
    ...(refusal ? { error: refusal.error } : {}),
  };
}

/**
 * Reads every field of a form before refusing it, so one answer marks each field that is wrong
 * (not only the first): `read` runs a field's check and keeps its refusal, `refuse` adds one,
 * `finish` throws them all as one VALIDATION_ERROR.
 */
export function fieldChecks() {
  const details: ErrorDetail[] = [];
  return {
    read<T>(check: () => T, fallback: T): T {
      try {
        return check();
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'VALIDATION_ERROR' || !error.details) throw error;
        details.push(...error.details);
        return fallback;
      }
    },
    refuse(field: string, message: string): void {
      details.push({ field, message });
    },
    finish(): void {
      if (details.length === 0) return;
      throw new ApiError('VALIDATION_ERROR', details.map((d) => `${d.field} ${d.message}.`).join(' '), details);
    },
  };
}
