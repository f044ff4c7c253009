import Negotiator from 'negotiator';
import { escapeHtml } from './html.js';

/**
 * What every page shares to speak the reader's language: which language to use (`?lang=`, then
 * Accept-Language with its q-values), dictionaries checked to have one text per key in every
 * language, placeholders, amounts formatted for the language, and the markup (or template parts)
 * that keeps phones, codes and amounts readable inside right-to-left text. Each area keeps its
 * own dictionary set next to its pages; test/support/i18n.ts checks any set for completeness.
 */

export const LANGS = ['en', 'fr', 'ar'] as const;
export type Lang = (typeof LANGS)[number];
export const DEFAULT_LANG: Lang = 'en';

/** Each language's name written in that language: the language links show these, untranslated. */
export const LANGUAGE_NAMES: Readonly<Record<Lang, string>> = { en: 'English', fr: 'Français', ar: 'العربية' };

export function isLang(value: unknown): value is Lang {
  return typeof value === 'string' && (LANGS as readonly string[]).includes(value);
}

export function textDirection(lang: Lang): 'ltr' | 'rtl' {
  return lang === 'ar' ? 'rtl' : 'ltr';
}

/** The language a page speaks, and whether the reader chose it with `?lang=` (links and redirects then keep it). */
export interface LangChoice {
  lang: Lang;
  fromQuery: boolean;
}

/**
 * `?lang=` first (`fr`, `FR` and `fr-MR` all mean French; anything else is ignored), then the
 * Accept-Language header by its q-values (`en;q=0.1, fr` → French, `ar-MR` → Arabic, `q=0`
 * refuses a language), then English.
 */
export function negotiateLang(query: unknown, acceptLanguage: string | string[] | undefined): LangChoice {
  const asked = typeof query === 'string' ? query.trim().toLowerCase().split(/[-_]/)[0] : undefined;
  if (isLang(asked)) return { lang: asked, fromQuery: true };
  const header = Array.isArray(acceptLanguage) ? acceptLanguage.join(',') : acceptLanguage;
  if (!header) return { lang: DEFAULT_LANG, fromQuery: false };
  const preferred = new Negotiator({ headers: { 'accept-language': header } }).language([...LANGS]);
  return { lang: isLang(preferred) ? preferred : DEFAULT_LANG, fromQuery: false };
}

// Only the path and query of a same-site URL are ever produced; the base is a placeholder.
const BASE = 'http://page.invalid';

function pathAndQuery(url: URL): string {
  return `${url.pathname}${url.search}${url.hash}`;
}

/** A same-site path with the page's language kept: `lang=` set when the reader chose it with `?lang=`. */
export function keepLang(path: string, choice: LangChoice): string {
  if (!choice.fromQuery) return path;
  const url = new URL(path, BASE);
  url.searchParams.set('lang', choice.lang);
  return pathAndQuery(url);
}

export interface LanguageLink {
  lang: Lang;
  name: string;
  href: string;
  current: boolean;
}

/** The current page (`/p/abc?mode=test`) in each language, its other query parameters kept. */
export function languageLinks(currentPath: string, current: Lang): LanguageLink[] {
  return LANGS.map((lang) => {
    const url = new URL(currentPath, BASE);
    url.searchParams.set('lang', lang);
    return { lang, name: LANGUAGE_NAMES[lang], href: pathAndQuery(url), current: lang === current };
  });
}

// ---------------------------------------------------------------------------------------------
// Dictionaries

export type Dictionary<Key extends string = string> = Readonly<Record<Key, string>>;
export type DictionarySet<Key extends string = string> = Readonly<Record<Lang, Dictionary<Key>>>;

/**
 * A page's texts in every language. English is the reference: the compiler refuses a French or
 * Arabic dictionary without one of its keys (and an unknown key written in place); the
 * completeness test (test/support/i18n.ts) also refuses unused keys and placeholder mismatches.
 */
export function defineDictionaries<En extends Record<string, string>>(set: {
  en: En;
  fr: Record<keyof En, string>;
  ar: Record<keyof En, string>;
}): DictionarySet<Extract<keyof En, string>> {
  return set as DictionarySet<Extract<keyof En, string>>;
}

const PLACEHOLDER = /\{([a-zA-Z][a-zA-Z0-9]*)\}/g;

/** The `{name}` placeholders of a text, in order. */
export function placeholdersOf(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((match) => match[1]!);
}

function fill(template: string, values: Readonly<Record<string, string>>, literal: (text: string) => string): string {
  let out = '';
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const value = values[match[1]!];
    // A text asking for a value the page did not give is a programming error: fail loudly in tests.
    if (value === undefined) throw new Error(`no value for {${match[1]}} in "${template}"`);
    out += literal(template.slice(last, match.index)) + value;
    last = match.index + match[0].length;
  }
  return out + literal(template.slice(last));
}

/** A text with its placeholders filled with plain text (a <title>, an attribute, a script's text). */
export function fillText(template: string, values: Readonly<Record<string, string>>): string {
  return fill(template, values, (text) => text);
}

/** A text as HTML: the dictionary's words escaped, the values inserted as the HTML they already are. */
export function fillHtml(template: string, valuesHtml: Readonly<Record<string, string>>): string {
  return fill(template, valuesHtml, escapeHtml);
}

// ---------------------------------------------------------------------------------------------
// Numbers and amounts

/**
 * The Intl locale of each language. Arabic keeps Latin digits (`-u-nu-latn`): Mauritania writes
 * them, phones and codes are shown with them, and so the page never mixes two sets of digits.
 */
export const INTL_LOCALES: Readonly<Record<Lang, string>> = { en: 'en-US', fr: 'fr-FR', ar: 'ar-u-nu-latn' };

/** How each language names the currency after the number: the ISO code in English and French, "ouguiya" in Arabic. */
export const CURRENCY_UNITS: Readonly<Record<Lang, string>> = { en: 'MRU', fr: 'MRU', ar: 'أوقية' };

// A no-break space: an amount never wraps between its number and its unit.
const UNIT_SEPARATOR = '\u00a0';

export function formatNumber(value: number, lang: Lang): string {
  return new Intl.NumberFormat(INTL_LOCALES[lang]).format(value);
}

/** Basis points as the language writes a percentage with two decimals: 250 → "2.50%" (en), "2,50 %" (fr). */
export function formatBasisPoints(bps: number, lang: Lang): string {
  return new Intl.NumberFormat(INTL_LOCALES[lang], {
    style: 'percent',
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  }).format(bps / 10_000);
}

// One formatter per language: building one costs more than formatting (a statement of 100,000
// lines built 400,000 of them and spent 13 s doing it).
const amountFormats = new Map<Lang, Intl.NumberFormat>();

/** The unsigned number of an amount, grouped, two decimals: 123456 → "1,234.56", "1 234,56". */
function amountNumber(centimes: number, lang: Lang): string {
  let number = amountFormats.get(lang);
  if (!number) {
    number = new Intl.NumberFormat(INTL_LOCALES[lang], { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    amountFormats.set(lang, number);
  }
  return number.format(Math.abs(centimes) / 100);
}

/**
 * Integer centimes as the language writes the amount, with its unit and no direction mark: 123456
 * → "1,234.56 MRU" (en), "1 234,56 MRU" (fr), "1,234.56 أوقية" (ar); a negative one with a
 * hyphen-minus, "-1,234.56 MRU" (Intl would put an invisible U+200E before the Arabic minus). It is
 * `formatPageAmount`'s text of a positive amount, and what tests compare a page's text with. Pages
 * write amounts with `formatPageAmount`; files (CSVs) write bare numbers in an MRU column, no unit.
 * Centimes / 100 is exact to the cent for any amount this API allows (far below 2^53 / 100).
 */
export function formatAmount(centimes: number, lang: Lang): string {
  return `${centimes < 0 ? '-' : ''}${amountNumber(centimes, lang)}${UNIT_SEPARATOR}${CURRENCY_UNITS[lang]}`;
}

// Unicode's isolates: LEFT-TO-RIGHT ISOLATE ... POP DIRECTIONAL ISOLATE.
const LRI = '\u2066';
const PDI = '\u2069';
const MINUS = '\u2212';

/**
 * The one formatter of an amount a page shows (every template's `mru`/`amount`, every money part):
 * `formatAmount`'s text, except that a signed amount's sign and number are isolated left to right
 * (U+2066 … U+2069), "⁦−1,234.56⁩ أوقية". Without that, in Arabic the minus, a neutral character
 * beside a right-to-left unit, is drawn after the number ("1,234.56- أوقية"). An unsigned number
 * needs no isolation (its digits and marks hold together in either direction), so a positive
 * amount's text is `formatAmount`'s. `sign: 'always'` also writes "+" before a positive amount (a
 * price adjustment, money in). The minus is U+2212, the typographic one. `readAmount` reads the
 * text back (it drops the isolation marks).
 */
export function formatPageAmount(centimes: number, lang: Lang, sign: 'negative' | 'always' = 'negative'): string {
  const mark = centimes < 0 ? MINUS : sign === 'always' && centimes > 0 ? '+' : '';
  if (mark === '') return formatAmount(centimes, lang);
  return `${LRI}${mark}${amountNumber(centimes, lang)}${PDI}${UNIT_SEPARATOR}${CURRENCY_UNITS[lang]}`;
}

export function formatDateTime(date: Date, lang: Lang): string {
  return date.toLocaleString(INTL_LOCALES[lang], { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * A date and time in UTC, saying so ("Nov 27, 2026, 9:05 PM UTC"): for pages read from anywhere
 * (the merchant dashboard), where the server's own time zone would mean nothing.
 */
export function formatUtcDateTime(date: Date, lang: Lang): string {
  const text = date.toLocaleString(INTL_LOCALES[lang], { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'short' });
  return `${text}${UNIT_SEPARATOR}UTC`;
}

/** A month as the language names it ("November 2026", "novembre 2026", "نوفمبر 2026"), in UTC. */
export function formatUtcMonth(date: Date, lang: Lang): string {
  return date.toLocaleString(INTL_LOCALES[lang], { month: 'long', year: 'numeric', timeZone: 'UTC' });
}

/**
 * An amount as the language writes it in a field a customer types into: no unit, no grouping,
 * two decimals with the language's own mark (12345 → "123.45" in English and Arabic, "123,45" in
 * French). The pages' script reads back what the customer types with either mark.
 */
export function formatAmountInput(centimes: number, lang: Lang): string {
  return new Intl.NumberFormat(INTL_LOCALES[lang], {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
    useGrouping: false,
  }).format(centimes / 100);
}

// ---------------------------------------------------------------------------------------------
// Reading an amount as a person types it

/** What a form takes besides a plain amount: a leading minus (a price adjustment), the unit after it. */
export interface AmountReading {
  /** A leading "-" or "−" is read (a negative amount); refused otherwise. */
  signed?: boolean;
  /** The unit ("MRU" in any case, "أوقية") may follow the number; false where the field is not money. */
  unit?: boolean;
}

const ARABIC_DIGITS = /[\u0660-\u0669\u06f0-\u06f9]/g;
const UNIT_AFTER = /[\s\u00a0\u202f]*(?:mru|أوقية)$/i;
// LRI, RLI, FSI, PDI: the isolation marks a page's signed amount carries (`formatPageAmount`).
const ISOLATES = /[\u2066-\u2069]/g;
const AMOUNT_GRAMMAR = /^(?:(\d{1,3}(?:[ \u00a0\u202f]\d{3})+)|(\d{1,3}(?:,\d{3})+)|(\d+))(?:([.,])(\d{1,2}))?$/;

/**
 * The one amount reader: a form's text as integer centimes, or undefined when it is not an amount.
 * Every dashboard form reads its amounts here, and the customer pages' script
 * (http/views/assets/customer.js, `parseAmount`) implements the same grammar (a test runs both
 * on one table). It accepts what the pages show and what people type:
 *
 *   amount   = [sign] number [spaces unit]       spaces around the whole are ignored
 *   sign     = "-" | "−"                          only with `signed`
 *   number   = integer [mark fraction]
 *   integer  = digit{1,9}                        ("1250")
 *            | digit{1,3} (space digit{3})+      ("1 250"; space = U+0020, U+00A0 or U+202F, as fr shows)
 *            | digit{1,3} ("," digit{3})+        ("1,250"; only where the language's decimal mark is ".",
 *                                                 en and ar: in French "1,250" is 1,250 with 3 decimals)
 *   mark     = "."                               in every language ("1250.5" in French too)
 *            | ","                               only where it is the language's decimal mark (fr): in
 *                                                 en and ar "," is only ever a group mark, so "1,25" or
 *                                                 "100,50" (a mistyped "1,250"?) is refused, not read
 *                                                 as 1.25
 *   fraction = digit{1,2}                        ("1 250,5" is 1 250,50)
 *   unit     = "MRU" (any case) | "أوقية"          unless `unit: false`
 *
 * At most 9 digits before the mark. Arabic-Indic digits and the Arabic marks (٫ ٬) read as their
 * Latin twins; the isolation marks U+2066 … U+2069 (a signed amount copied from a page) are
 * dropped. Refused: anything else, "1,2,3", "1.250,50.1", "1,250,50" (one mark for two uses),
 * 3 decimals, a sign where the form takes none.
 */
export function readAmount(text: string, lang: Lang, options: AmountReading = {}): number | undefined {
  let rest = String(text)
    .replace(ARABIC_DIGITS, (digit) => String((digit.codePointAt(0)! - 0x0660) % 0x90))
    .replace(/\u066b/g, '.')
    .replace(/\u066c/g, ',')
    .replace(ISOLATES, '')
    .trim();
  if (options.unit !== false) rest = rest.replace(UNIT_AFTER, '');
  const negative = options.signed === true && /^[-\u2212]/.test(rest);
  if (negative) rest = rest.slice(1);
  const match = AMOUNT_GRAMMAR.exec(rest);
  if (!match) return undefined;
  const [, spaced, commaGrouped, plain, mark, fraction] = match;
  // In en and ar "," groups and never marks decimals; in fr it marks decimals and never groups.
  if (mark === ',' && decimalMark(lang) !== ',') return undefined;
  if (commaGrouped !== undefined && decimalMark(lang) !== '.') return undefined;
  const integer = (spaced ?? commaGrouped ?? plain!).replace(/\D/g, '');
  if (integer.length > 9) return undefined;
  const centimes = Number(integer) * 100 + Number((fraction ?? '').padEnd(2, '0'));
  return negative && centimes > 0 ? -centimes : centimes;
}

/** The language's decimal mark: "," in French, "." in English and Arabic (Latin digits). */
function decimalMark(lang: Lang): string {
  return formatNumber(1.5, lang).includes(',') ? ',' : '.';
}

/** What a page's script needs to write amounts and dates exactly as the server does. */
export interface ClientFormatting {
  locale: string;
  /** What follows the number of an amount: a no-break space and the unit. */
  unitSuffix: string;
}

export function clientFormatting(lang: Lang): ClientFormatting {
  return { locale: INTL_LOCALES[lang], unitSuffix: `${UNIT_SEPARATOR}${CURRENCY_UNITS[lang]}` };
}

// ---------------------------------------------------------------------------------------------
// Direction isolation

/** Text from a merchant or a customer (a shop name, a label): its direction is its own. */
export function isolatedHtml(text: string): string {
  return `<bdi>${escapeHtml(text)}</bdi>`;
}

// ---------------------------------------------------------------------------------------------
// Texts as parts, for templates that escape what they write

/**
 * A piece of a filled text, for a template engine that escapes everything it writes: the
 * dictionary's own words (`text`), or a value to isolate: an amount (`money`, drawn as
 * `<bdi class="money">`), text that always reads left to right such as a phone or a reference
 * (`ltr`, `<bdi dir="ltr">`), or a merchant's text (`isolated`, as `isolatedHtml`). The template
 * draws each kind's element.
 */
export interface TextPart {
  kind: 'text' | 'money' | 'ltr' | 'isolated';
  text: string;
}

export const moneyPart = (centimes: number, lang: Lang): TextPart => ({
  kind: 'money',
  text: formatPageAmount(centimes, lang),
});
export const ltrPart = (text: string): TextPart => ({ kind: 'ltr', text });
export const isolatedPart = (text: string): TextPart => ({ kind: 'isolated', text });

/**
 * `fillHtml` as parts: the dictionary's words and the values in their order, nothing escaped yet.
 * A value may itself be a filled text (its parts are spliced in).
 */
export function fillParts(
  template: string,
  values: Readonly<Record<string, TextPart | readonly TextPart[]>>,
): TextPart[] {
  const parts: TextPart[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const value = values[match[1]!];
    if (value === undefined) throw new Error(`no value for {${match[1]}} in "${template}"`);
    if (match.index > last) parts.push({ kind: 'text', text: template.slice(last, match.index) });
    if (Array.isArray(value)) parts.push(...(value as readonly TextPart[]));
    else parts.push(value as TextPart);
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push({ kind: 'text', text: template.slice(last) });
  return parts;
}
