import { defineDictionaries, LANGS, type DictionarySet, type Lang } from '../../lib/i18n.js';
import type { ErrorCode } from '../../http/errors.js';
import { authTexts } from './pages/auth/texts.js';
import { balanceTexts } from './pages/balance/texts.js';
import { developerTexts } from './pages/developers/texts.js';
import { homeTexts } from './pages/home/texts.js';
import { orderTexts } from './pages/orders/texts.js';
import { paymentTexts } from './pages/payments/texts.js';
import { payoutTexts } from './pages/payouts/texts.js';
import { productTexts } from './pages/products/texts.js';
import { settingsTexts } from './pages/settings/texts.js';
import { ar } from './texts/ar.js';
import { en } from './texts/en.js';
import { errorTexts } from './texts/errors.js';
import { fr } from './texts/fr.js';

type KeyOf<Set> = Set extends DictionarySet<infer Key> ? Key : never;

/**
 * One dictionary set from several, each a page's own (or the shared words): a key written in two
 * of them is a mistake found at startup, not a word silently replaced.
 */
function joinDictionaries<Sets extends readonly DictionarySet[]>(...sets: Sets): DictionarySet<KeyOf<Sets[number]>> {
  const joined = Object.fromEntries(LANGS.map((lang) => [lang, {} as Record<string, string>]));
  for (const set of sets) {
    for (const lang of LANGS) {
      for (const [key, text] of Object.entries(set[lang])) {
        if (Object.hasOwn(joined[lang]!, key)) throw new Error(`dashboard text "${key}" is written twice`);
        joined[lang]![key] = text;
      }
    }
  }
  return joined as DictionarySet<KeyOf<Sets[number]>>;
}

/**
 * The dashboard's texts on the shared i18n core (src/lib/i18n.ts: languages, negotiation,
 * amounts, dates, direction): the words pages share (layout, navigation, statuses, formats,
 * forms) under texts/, each page's own in its folder (pages/<page>/texts.ts), each set refusing
 * at compile time a language without one of its keys; checked whole by
 * test/dashboard/dictionaries.test.ts, and the words for every error code (texts/errors.ts).
 */
export const dictionaries = joinDictionaries(
  defineDictionaries({ en, fr, ar }),
  authTexts,
  balanceTexts,
  developerTexts,
  homeTexts,
  orderTexts,
  paymentTexts,
  payoutTexts,
  productTexts,
  settingsTexts,
);
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
