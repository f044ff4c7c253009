/*
 * What every customer page's script shares: the page's data (texts, formats; `data-page` on
 * <body>, written by the server), amounts and dates written exactly as the server writes them,
 * amounts read as the customer types them, phones shown as the wallet they name, and the page's
 * own text for an API error. Plain browser JavaScript, no build step; its pure functions are
 * unit-tested in Node (test/i18n/customer-script.test.ts).
 */
/* global document, crypto */
'use strict';
globalThis.Customer = (() => {
  /** The number format of a language's amounts: two decimals, grouped. */
  function amountFormat(format) {
    return new Intl.NumberFormat(format.locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }

  /** Centimes as the page's language writes the amount: "1,234.56 MRU", "1 234,56 MRU", "1,234.56 أوقية". */
  function formatAmount(centimes, format) {
    return amountFormat(format).format(centimes / 100) + format.unitSuffix;
  }

  /** Centimes as an amount field shows them: no unit, no grouping, the language's decimal mark ("100,50" in French). */
  function formatAmountInput(centimes, format) {
    return new Intl.NumberFormat(format.locale, {
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
      useGrouping: false,
    }).format(centimes / 100);
  }

  function formatDateTime(iso, format) {
    return new Date(iso).toLocaleString(format.locale, { dateStyle: 'medium', timeStyle: 'short' });
  }

  function decimalMark(format) {
    const part = new Intl.NumberFormat(format.locale).formatToParts(1.5).find((p) => p.type === 'decimal');
    return part ? part.value : '.';
  }

  /**
   * An amount as typed, in centimes, or null: the grammar of the server's one amount reader
   * (src/lib/i18n.ts, readAmount; test/i18n/amount-reader.test.ts runs both on one table).
   * Digits grouped by spaces (U+0020, U+00A0, U+202F) or, where the language's decimal mark is ".",
   * by ","; one or two decimals after "." or, only where it is the language's decimal mark (fr),
   * "," (in en and ar "," only groups: "1,25" is refused, not read as 1.25); at most 9 digits
   * before the mark; "MRU" or "أوقية" may follow; Arabic-Indic digits read as Latin ones; the
   * isolation marks U+2066-U+2069 of a copied page amount are dropped; no sign.
   */
  function parseAmount(text, format) {
    const rest = String(text == null ? '' : text)
      .replace(/[\u0660-\u0669\u06f0-\u06f9]/g, (digit) => String((digit.codePointAt(0) - 0x0660) % 0x90))
      .replace(/\u066b/g, '.')
      .replace(/\u066c/g, ',')
      .replace(/[\u2066-\u2069]/g, '')
      .trim()
      .replace(/[\s\u00a0\u202f]*(?:mru|أوقية)$/i, '');
    const match = /^(?:(\d{1,3}(?:[ \u00a0\u202f]\d{3})+)|(\d{1,3}(?:,\d{3})+)|(\d+))(?:([.,])(\d{1,2}))?$/.exec(rest);
    if (!match) return null;
    if (match[4] === ',' && decimalMark(format) !== ',') return null;
    if (match[2] !== undefined && decimalMark(format) !== '.') return null;
    const integer = (match[1] || match[2] || match[3]).replace(/\D/g, '');
    if (integer.length > 9) return null;
    return Number(integer) * 100 + Number((match[5] || '').padEnd(2, '0'));
  }

  /**
   * A phone as the page shows it back: a Mauritanian number typed with its 8 national digits
   * (or with 222 or 00222 in front) becomes "+222 20 00 00 01", the wallet the server will read
   * (src/lib/phone.ts decides; this is only what the customer sees). Anything else stays as typed.
   */
  function displayPhone(typed) {
    const digits = String(typed).replace(/[\s().\u00a0\u202f-]/g, '');
    const national = /^(?:\+222|00222|222)?([2-4][0-9]{7})$/.exec(digits);
    if (!national) return String(typed).trim();
    return '+222 ' + national[1].replace(/(\d{2})(?=\d)/g, '$1 ');
  }

  /** The page's text for an API error answer: by code and field, then by code, then a generic one. */
  function errorText(json, errors) {
    const error = json && json.error;
    if (!error) return errors.generic;
    let field = error.details && error.details[0] && error.details[0].field;
    if (field && /^body\.items\.\d+\.price$/.test(field)) field = 'price';
    return (field && errors.byCode[error.code + ':' + field]) || errors.byCode[error.code] || errors.generic;
  }

  /** A fresh idempotency key: one per attempt, sent again only when no answer came back. */
  function newKey() {
    return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  }

  async function postJson(path, body, key) {
    const headers = { 'content-type': 'application/json' };
    if (key) headers['x-idempotency-key'] = key;
    const response = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
    let json = null;
    try {
      json = await response.json();
    } catch {
      // An answer that is not JSON (a proxy's page): the generic error text says it.
    }
    return { ok: response.ok, status: response.status, json };
  }

  /** The page's data, read once. */
  let pageData;
  function data() {
    if (pageData === undefined) pageData = JSON.parse(document.body.dataset.page || '{}');
    return pageData;
  }

  /** Every phone field of the page shows the wallet it names once the customer leaves it. */
  function showPhonesAsWallets() {
    for (const input of document.querySelectorAll('input[type=tel]')) {
      input.addEventListener('blur', () => {
        if (input.value.trim()) input.value = displayPhone(input.value);
      });
    }
  }

  if (typeof document !== 'undefined') {
    document.addEventListener('DOMContentLoaded', showPhonesAsWallets);
  }

  return {
    data,
    formatAmount: (centimes) => formatAmount(centimes, data().format),
    formatAmountInput: (centimes) => formatAmountInput(centimes, data().format),
    formatDateTime: (iso) => formatDateTime(iso, data().format),
    parseAmount: (text) => parseAmount(text, data().format),
    errorText: (json) => errorText(json, data().errors),
    displayPhone,
    newKey,
    postJson,
    /** The pure functions, each taking the format, for the unit tests. */
    pure: { formatAmount, formatAmountInput, formatDateTime, parseAmount, displayPhone, errorText },
  };
})();
