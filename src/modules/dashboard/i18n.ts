import {
  defineDictionaries,
  LANGS,
  type Dictionary as LibDictionary,
  type DictionarySet,
  type Lang,
} from '../../lib/i18n.js';
import type { ErrorCode } from '../../http/errors.js';
import { isEventName } from '../events/catalog.js';
import { activityTexts } from './pages/activity/texts.js';
import { authTexts } from './pages/auth/texts.js';
import { balanceTexts } from './pages/balance/texts.js';
import { developerTexts } from './pages/developers/texts.js';
import { homeTexts } from './pages/home/texts.js';
import { linkTexts } from './pages/links/texts.js';
import { orderTexts } from './pages/orders/texts.js';
import { paymentTexts } from './pages/payments/texts.js';
import { payoutTexts } from './pages/payouts/texts.js';
import { productTexts } from './pages/products/texts.js';
import { sellerTexts } from './pages/sellers/texts.js';
import { settingsTexts } from './pages/settings/texts.js';
import { teamTexts } from './pages/team/texts.js';
import { ar } from './texts/ar.js';
import { en } from './texts/en.js';
import { errorTexts } from './texts/errors.js';
import { eventTexts } from './texts/events.js';
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

/** The words every page may say (layout, navigation, statuses, formats, forms). */
const sharedTexts = defineDictionaries({ en, fr, ar });

/** Each page's own words, by the page's folder under pages/. */
const pageTexts = {
  activity: activityTexts,
  auth: authTexts,
  balance: balanceTexts,
  developers: developerTexts,
  home: homeTexts,
  links: linkTexts,
  orders: orderTexts,
  payments: paymentTexts,
  payouts: payoutTexts,
  products: productTexts,
  sellers: sellerTexts,
  settings: settingsTexts,
  team: teamTexts,
} as const;

export type DashboardPage = keyof typeof pageTexts;

/**
 * The words a page may say: the shared ones and its own (`Dictionary<'payouts'>`), or the shared
 * ones alone (`Dictionary`), so a page's code reading another page's word does not compile.
 */
export type Dictionary<Page extends DashboardPage = never> = LibDictionary<
  KeyOf<typeof sharedTexts> | KeyOf<(typeof pageTexts)[Page]>
>;

/**
 * The dashboard's texts on the shared i18n core (src/lib/i18n.ts: languages, negotiation,
 * amounts, dates, direction): the words pages share under texts/, each page's own in its folder
 * (pages/<page>/texts.ts), each set refusing at compile time a language without one of its keys;
 * checked whole by test/dashboard/dictionaries.test.ts, and the words for every error code
 * (texts/errors.ts). All of them joined: the templates' `it.t` (the test checks that a page's
 * templates read only its own words and the shared ones).
 */
export const dictionaries = joinDictionaries(sharedTexts, ...Object.values(pageTexts));

const pageDictionaries = Object.fromEntries(
  Object.entries(pageTexts).map(([page, texts]) => [page, joinDictionaries(sharedTexts, texts)]),
) as { [Page in DashboardPage]: DictionarySet<keyof Dictionary<Page>> };

/** A page's words (its own and the shared ones) in `lang`: what its routes and view model read. */
export function wordsFor<Page extends DashboardPage>(page: Page, lang: Lang): Dictionary<Page> {
  return pageDictionaries[page][lang];
}

/** The words every page shares, in `lang`: what the dashboard's shared parts read. */
export function sharedWords(lang: Lang): Dictionary {
  return sharedTexts[lang];
}

export { errorTexts, eventTexts };

/** What the dashboard says for an error code, in the page's language. */
export function errorText(code: ErrorCode, lang: Lang): string {
  return errorTexts[lang][code];
}

/** An event's name in the page's language (a timeline's line); one the catalogue does not name stays its code. */
export function eventText(name: string, lang: Lang): string {
  return isEventName(name) ? eventTexts[lang][name] : name;
}
