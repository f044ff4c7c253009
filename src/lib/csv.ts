/**
 * CSV injection (OWASP): a spreadsheet runs a cell starting with = + - @, a tab or a carriage
 * return as a formula. Export prefixes such text cells with an apostrophe, and also any cell
 * already starting with one, so that import can always strip exactly one leading apostrophe and
 * the round trip stays lossless.
 */
const NEEDS_QUOTE = /^[=+\-@\t\r']/;

export function neutraliseCell(text: string): string {
  return NEEDS_QUOTE.test(text) ? `'${text}` : text;
}

export function restoreCell(text: string): string {
  return text.startsWith("'") ? text.slice(1) : text;
}

/** A CSV cell as RFC 4180 (and csv-stringify) writes one: quoted when it holds a quote, a comma or a line break. */
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A cell of free text (a description, a name): safe from spreadsheets' formulas, then quoted as needed. */
export function csvTextCell(text: string): string {
  return csvCell(neutraliseCell(text));
}
