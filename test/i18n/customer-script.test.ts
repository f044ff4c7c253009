import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'vitest';
import vm from 'node:vm';
import { clientFormatting, formatAmount, formatAmountInput, formatDateTime, LANGS } from '../../src/lib/i18n.js';

/** The customer pages' shared browser script, run in a bare context: only its pure functions are used. */
function customerScript() {
  const source = readFileSync(path.resolve('src/http/views/assets/customer.js'), 'utf8');
  const context = vm.createContext({ Intl, crypto: globalThis.crypto });
  vm.runInContext(source, context);
  return (context as unknown as { Customer: { pure: Pure } }).Customer.pure;
}

interface Format {
  locale: string;
  unitSuffix: string;
}
interface Pure {
  formatAmount(centimes: number, format: Format): string;
  formatAmountInput(centimes: number, format: Format): string;
  formatDateTime(iso: string, format: Format): string;
  parseAmount(text: string, format: Format): number | null;
  displayPhone(typed: string): string;
  errorText(json: unknown, errors: { byCode: Record<string, string>; generic: string }): string;
}

describe("the customer pages' browser script (issue 38)", () => {
  const pure = customerScript();

  test('writes amounts, amount fields and dates exactly as the server does, in every language', () => {
    for (const lang of LANGS) {
      const format = clientFormatting(lang);
      for (const centimes of [0, 7, 4_500, 12_345, 100_000_000, 999_999_999_99]) {
        assert.equal(pure.formatAmount(centimes, format), formatAmount(centimes, lang), `${lang} ${centimes}`);
        assert.equal(pure.formatAmountInput(centimes, format), formatAmountInput(centimes, lang));
      }
      const at = '2026-11-27T09:05:00.000Z';
      assert.equal(pure.formatDateTime(at, format), formatDateTime(new Date(at), lang));
    }
  });

  test("reads an amount typed with the language's decimal mark, or the other one where it can mean nothing else", () => {
    const fr = clientFormatting('fr');
    const en = clientFormatting('en');
    const ar = clientFormatting('ar');
    const cases: [string, Format, number | null][] = [
      ['100,50', fr, 10_050],
      ['100,5', fr, 10_050],
      ['100.50', fr, 10_050],
      ['1 234,50', fr, 123_450],
      ['1\u202f234,50', fr, 123_450],
      [formatAmountInput(10_050, 'fr'), fr, 10_050],
      ['1,234', fr, null],
      ['100.50', en, 10_050],
      ['100,50', en, null],
      ['1,234.50', en, 123_450],
      ['1,234', en, 123_400],
      ['12', en, 1_200],
      [' 12.5 ', ar, 1_250],
      ['1,234.5', ar, 123_450],
      ['12.345', en, null],
      ['', en, null],
      ['abc', fr, null],
      ['-5', en, null],
      ['1e3', en, null],
      ['1234567890', en, null],
      ['100,50,00', fr, null],
    ];
    for (const [typed, format, expected] of cases)
      assert.equal(pure.parseAmount(typed, format), expected, `"${typed}" in ${format.locale}`);
  });

  test('shows a Mauritanian number typed nationally as the +222 wallet; anything else as typed', () => {
    assert.equal(pure.displayPhone('20000001'), '+222 20 00 00 01');
    assert.equal(pure.displayPhone(' 20 00 00 01 '), '+222 20 00 00 01');
    assert.equal(pure.displayPhone('222 20000001'), '+222 20 00 00 01');
    assert.equal(pure.displayPhone('0022220000001'), '+222 20 00 00 01');
    assert.equal(pure.displayPhone('+22241234567'), '+222 41 23 45 67');
    assert.equal(pure.displayPhone('+33612345678'), '+33612345678');
    assert.equal(pure.displayPhone('2000'), '2000');
  });

  test("an API error becomes the page's text: by code and field, by code, or the generic text", () => {
    const errors = {
      byCode: { 'VALIDATION_ERROR:body.phone': 'phone', 'VALIDATION_ERROR:price': 'price', INVALID_PIN: 'pin' },
      generic: 'generic',
    };
    const error = (code: string, field?: string) => ({ error: { code, details: field ? [{ field }] : undefined } });
    assert.equal(pure.errorText(error('VALIDATION_ERROR', 'body.phone'), errors), 'phone');
    assert.equal(pure.errorText(error('VALIDATION_ERROR', 'body.items.3.price'), errors), 'price');
    assert.equal(pure.errorText(error('INVALID_PIN'), errors), 'pin');
    assert.equal(pure.errorText(error('VALIDATION_ERROR', 'body.pin'), errors), 'generic');
    assert.equal(pure.errorText(null, errors), 'generic');
  });
});
