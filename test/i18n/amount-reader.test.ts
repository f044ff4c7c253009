import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { describe, test } from 'vitest';
import {
  clientFormatting,
  formatAmount,
  formatAmountInput,
  formatPageAmount,
  LANGS,
  readAmount,
  type Lang,
} from '../../src/lib/i18n.js';

/** The customer pages' script's reader, run in a bare context (as test/i18n/customer-script.test.ts does). */
function clientReader(): (text: string, lang: Lang) => number | null {
  const source = readFileSync(path.resolve('src/http/views/assets/customer.js'), 'utf8');
  const context = vm.createContext({ Intl, crypto: globalThis.crypto });
  vm.runInContext(source, context);
  const pure = (
    context as unknown as { Customer: { pure: { parseAmount(text: string, format: unknown): number | null } } }
  ).Customer.pure;
  return (text, lang) => pure.parseAmount(text, clientFormatting(lang));
}

// [typed, language, centimes or undefined when refused]
const CASES: [string, Lang, number | undefined][] = [
  ['1 250', 'fr', 125_000],
  ['1 250,50', 'fr', 125_050],
  ['1 250,5', 'fr', 125_050],
  ['1\u00a0250,50', 'fr', 125_050],
  ['1\u202f250,50', 'fr', 125_050],
  ['1\u202f250,50\u00a0MRU', 'fr', 125_050],
  ['1 250,50 mru', 'fr', 125_050],
  ['1250.5', 'fr', 125_050],
  ['1,250.50', 'en', 125_050],
  ['1,250.50 MRU', 'en', 125_050],
  ['1,250', 'en', 125_000],
  ['1,234,567.89', 'en', 123_456_789],
  ['1 250', 'en', 125_000],
  ['1250.5', 'en', 125_050],
  ['1,250.50 أوقية', 'ar', 125_050],
  ['١٢٥٠٫٥', 'ar', 125_050],
  [' 12 ', 'ar', 1_200],
  ['0.05', 'en', 5],
  ['999999999.99', 'en', 99_999_999_999],
  // refused
  ['1,250', 'fr', undefined],
  // in en and ar "," only groups: a mistyped "1,250" is refused, never read 1000 times smaller
  ['100,50', 'en', undefined],
  ['1,25', 'en', undefined],
  ['1,25', 'ar', undefined],
  ['1 250,50', 'en', undefined],
  ['١٢٥٠٬٥', 'ar', undefined],
  ['1,25', 'fr', 125],
  // a page's isolation marks (a signed amount copied from a page) are not part of the amount
  ['\u20661,250.50\u2069 MRU', 'en', 125_050],
  ['1,2,3', 'en', undefined],
  ['1.250,50.1', 'fr', undefined],
  ['1,250,50', 'en', undefined],
  ['12.345', 'en', undefined],
  ['1 25', 'fr', undefined],
  ['1  250', 'fr', undefined],
  ['1250,505', 'fr', undefined],
  ['-5', 'en', undefined],
  ['−5', 'fr', undefined],
  ['1e3', 'en', undefined],
  ['1234567890', 'en', undefined],
  ['MRU', 'en', undefined],
  ['', 'en', undefined],
  ['abc', 'fr', undefined],
  ['5 EUR', 'fr', undefined],
];

describe('the one amount reader (issue 54, item 12)', () => {
  const client = clientReader();

  test('reads what the pages show and refuses what could mean two things; the customer script agrees', () => {
    for (const [typed, lang, expected] of CASES) {
      assert.equal(readAmount(typed, lang), expected, `server: "${typed}" in ${lang}`);
      assert.equal(client(typed, lang), expected ?? null, `customer script: "${typed}" in ${lang}`);
    }
  });

  test('every amount a page shows, and every amount field it fills, reads back to its centimes', () => {
    for (const lang of LANGS)
      for (const centimes of [0, 5, 10_050, 125_050, 123_456_789, 99_999_999_999]) {
        assert.equal(readAmount(formatAmount(centimes, lang), lang), centimes, `${formatAmount(centimes, lang)}`);
        assert.equal(readAmount(formatAmountInput(centimes, lang), lang), centimes);
        assert.equal(client(formatAmount(centimes, lang), lang), centimes);
        // What a page shows of a negative amount (a price adjustment), copied into a signed field:
        // its sign and number isolated (U+2066 … U+2069), the minus U+2212.
        const shown = formatPageAmount(0 - centimes, lang);
        assert.equal(readAmount(shown, lang, { signed: true }), 0 - centimes, shown);
        assert.equal(client(formatPageAmount(centimes, lang), lang), centimes);
      }
  });

  test('a sign only where the form takes one; the unit only where the field is money', () => {
    assert.equal(readAmount('-0,50', 'fr', { signed: true }), -50);
    assert.equal(readAmount('−1 250 MRU', 'fr', { signed: true }), -125_000);
    assert.equal(readAmount('-0', 'en', { signed: true }), 0);
    assert.equal(readAmount('2.50', 'en', { unit: false }), 250);
    assert.equal(readAmount('2.50 MRU', 'en', { unit: false }), undefined);
  });
});
