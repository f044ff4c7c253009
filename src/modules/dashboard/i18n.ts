import { defineDictionaries, type Lang } from '../../lib/i18n.js';
import type { ErrorCode } from '../../http/errors.js';
import { ar } from './texts/ar.js';
import { en } from './texts/en.js';
import { errorTexts } from './texts/errors.js';
import { fr } from './texts/fr.js';

/**
 * The dashboard's texts on the shared i18n core (src/lib/i18n.ts: languages, negotiation,
 * amounts, dates, direction): one dictionary per language under texts/, checked for completeness
 * by test/dashboard/dictionaries.test.ts, and the words for every error code (texts/errors.ts).
 */
export const dictionaries = defineDictionaries({ en, fr, ar });
export type Dictionary = (typeof dictionaries)['en'];

export { errorTexts };

/** What the dashboard says for an error code, in the page's language. */
export function errorText(code: ErrorCode, lang: Lang): string {
  return errorTexts[lang][code];
}

/** A form's "12.5" or "12,50" as centimes, or undefined when it is not an amount. */
export function parseMru(text: string): number | undefined {
  const match = /^\s*(\d{1,9})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}
