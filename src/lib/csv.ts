/**
 * CSV injection (OWASP): a spreadsheet runs a cell starting with = + - @, a tab or a carriage
 * return as a formula. Export prefixes such text cells with an apostrophe, and also any cell
 * already starting with one, so that import can always strip exactly one leading apostrophe and
 * the round trip stays lossless.
 *
 * A cell also starts after a separator the spreadsheet may split on instead of the comma: Excel
 * in French or Arabic regional settings splits on `;`, pasted text and LibreOffice's import on
 * tabs, and a spreadsheet that does not honour the quotes (Excel splitting on `;` does not) starts
 * a row at each line break inside a quoted cell. So the same rule applies after each `;`, tab, CR
 * and LF: an apostrophe goes after one followed by = + - @, a quote or an apostrophe, and import
 * takes exactly one apostrophe off after each. Commas are left alone: a cell holding one is
 * always quoted, and every spreadsheet that splits on commas honours quotes (decision 022).
 */
const NEEDS_QUOTE = /^[=+\-@\t\r']/;
const SEPARATOR_THEN_FORMULA = /([;\t\r\n])(?=[=+\-@'"])/g;
const SEPARATOR_THEN_APOSTROPHE = /([;\t\r\n])'/g;

/** The text safe to open in a spreadsheet, whatever separator it splits on. */
export function neutraliseCell(text: string): string {
  const inner = text.replace(SEPARATOR_THEN_FORMULA, "$1'");
  return NEEDS_QUOTE.test(inner) ? `'${inner}` : inner;
}

/** What `neutraliseCell` was given: one apostrophe off the start and after each separator. */
export function restoreCell(text: string): string {
  const inner = text.startsWith("'") ? text.slice(1) : text;
  return inner.replace(SEPARATOR_THEN_APOSTROPHE, '$1');
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
