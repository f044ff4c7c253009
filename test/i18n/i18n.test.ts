import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import {
  fillHtml,
  fillText,
  fillParts,
  formatAmount,
  formatAmountInput,
  isolatedPart,
  keepLang,
  languageLinks,
  ltrPart,
  moneyPart,
  negotiateLang,
} from '../../src/lib/i18n.js';

describe('shared i18n helpers of the customer pages (issue 19)', () => {
  test('Accept-Language is read by its q-values; ?lang= overrides it; English when nothing fits', () => {
    const lang = (query: unknown, header?: string | string[]) => negotiateLang(query, header).lang;
    assert.equal(lang(undefined, 'en;q=0.1, fr'), 'fr');
    assert.equal(lang(undefined, 'ar-MR,ar;q=0.9,fr;q=0.8'), 'ar');
    assert.equal(lang(undefined, 'de-DE, fr-FR;q=0.5, ar;q=0.7'), 'ar');
    assert.equal(lang(undefined, 'fr;q=0, en;q=0.1'), 'en');
    assert.equal(lang(undefined, 'de, ja'), 'en');
    assert.equal(lang(undefined, ''), 'en');
    assert.equal(lang(undefined, undefined), 'en');
    assert.equal(lang(undefined, ['de', 'fr;q=0.3']), 'fr');
    assert.deepEqual(negotiateLang('ar', 'fr'), { lang: 'ar', fromQuery: true });
    assert.deepEqual(negotiateLang('FR-mr', 'ar'), { lang: 'fr', fromQuery: true });
    assert.deepEqual(negotiateLang('xx', 'ar'), { lang: 'ar', fromQuery: false });
    assert.deepEqual(negotiateLang(['fr'], undefined), { lang: 'en', fromQuery: false });
  });

  test('a language chosen with ?lang= is kept in links and redirects; a negotiated one is not written', () => {
    assert.equal(keepLang('/p/abc', { lang: 'ar', fromQuery: true }), '/p/abc?lang=ar');
    assert.equal(keepLang('/pay?mode=test&lang=fr', { lang: 'ar', fromQuery: true }), '/pay?mode=test&lang=ar');
    assert.equal(keepLang('/p/abc', { lang: 'fr', fromQuery: false }), '/p/abc');
    assert.deepEqual(
      languageLinks('/pay?mode=test&code=123456', 'fr').map((link) => [link.lang, link.href, link.current]),
      [
        ['en', '/pay?mode=test&code=123456&lang=en', false],
        ['fr', '/pay?mode=test&code=123456&lang=fr', true],
        ['ar', '/pay?mode=test&code=123456&lang=ar', false],
      ],
    );
  });

  test('amounts: exact centimes, grouped and placed as each language writes them', () => {
    assert.equal(formatAmount(123_456, 'en'), '1,234.56\u00a0MRU');
    assert.equal(formatAmount(123_456, 'fr'), '1\u202f234,56\u00a0MRU');
    assert.equal(formatAmount(123_456, 'ar'), '1,234.56\u00a0أوقية');
    assert.equal(formatAmount(5, 'en'), '0.05\u00a0MRU');
    assert.equal(formatAmount(999_999_999_99, 'en'), '999,999,999.99\u00a0MRU');
  });

  test("an amount field shows the language's decimal mark, without unit or grouping", () => {
    assert.equal(formatAmountInput(10_050, 'en'), '100.50');
    assert.equal(formatAmountInput(10_050, 'fr'), '100,50');
    assert.equal(formatAmountInput(10_050, 'ar'), '100.50');
    assert.equal(formatAmountInput(123_456_789, 'fr'), '1234567,89');
    assert.equal(formatAmountInput(5, 'en'), '0.05');
  });

  test('placeholders: values inserted, words escaped, a missing value refused', () => {
    assert.equal(fillText('Pay {merchant}', { merchant: 'A & B' }), 'Pay A & B');
    assert.equal(
      fillHtml('<{refunded}> of {paid}', { refunded: '<bdi>45</bdi>', paid: '<b>x</b>' }),
      '&lt;<bdi>45</bdi>&gt; of <b>x</b>',
    );
    assert.throws(() => fillText('{a} and {b}', { a: '1' }), /no value for \{b\}/);
  });

  test('placeholders as parts, for templates that escape: words and values in order, nested texts spliced', () => {
    assert.deepEqual(
      fillParts('{refunded} of {paid} <refunded>.', { refunded: moneyPart(4_500, 'en'), paid: ltrPart('<b>') }),
      [
        { kind: 'money', text: '45.00\u00a0MRU' },
        { kind: 'text', text: ' of ' },
        { kind: 'ltr', text: '<b>' },
        { kind: 'text', text: ' <refunded>.' },
      ],
    );
    assert.deepEqual(
      fillParts('{a} · {b}', {
        a: isolatedPart('x'),
        b: fillParts('balance {amount}', { amount: moneyPart(100, 'fr') }),
      }),
      [
        { kind: 'isolated', text: 'x' },
        { kind: 'text', text: ' · ' },
        { kind: 'text', text: 'balance ' },
        { kind: 'money', text: '1,00\u00a0MRU' },
      ],
    );
    assert.deepEqual(fillParts('Pay', {}), [{ kind: 'text', text: 'Pay' }]);
    assert.throws(() => fillParts('{a} and {b}', { a: ltrPart('1') }), /no value for \{b\}/);
  });
});
