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
   * An amount as typed, in centimes, or null. Spaces between digits are ignored ("1 234,50");
   * the decimal mark is the language's (French ",") or the other one when it can mean nothing
   * else (one or two digits after it: "100.5" on the French page is 100,50). Where the language
   * groups with "," (English, Arabic), "1,234.50" is read with its grouping. At most 9 digits
   * before the mark.
   */
  function parseAmount(text, format) {
    const compact = String(text == null ? '' : text).replace(/[\s\u00a0\u202f]/g, '');
    let match = /^(\d{1,9})(?:[.,](\d{1,2}))?$/.exec(compact);
    if (!match && decimalMark(format) === '.') {
      const grouped = /^(\d{1,3}(?:,\d{3})+)(?:\.(\d{1,2}))?$/.exec(compact);
      if (grouped && grouped[1].replace(/,/g, '').length <= 9)
        match = [grouped[0], grouped[1].replace(/,/g, ''), grouped[2]];
    }
    if (!match) return null;
    return Number(match[1]) * 100 + Number((match[2] || '').padEnd(2, '0'));
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
