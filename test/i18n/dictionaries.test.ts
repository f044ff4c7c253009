import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, test } from 'vitest';
import type { DictionarySet } from '../../src/lib/i18n.js';
import { checkoutDictionaries } from '../../src/modules/checkout/i18n.js';
import { linkPageDictionaries } from '../../src/modules/links/i18n.js';
import { statementDictionaries } from '../../src/modules/payments/statement-i18n.js';
import { storefrontDictionaries } from '../../src/modules/storefront/i18n.js';
import { dictionaryProblems, englishLeaks, readSources, type DictionarySetUnderTest } from '../support/i18n.js';

/** The templates of a views folder (repository paths). */
function templatesIn(folder: string): string[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.eta'))
    .map((name) => `${folder}/${name}`);
}

/** Every dictionary set of the customer pages; a new page adds its set here. */
const SETS: DictionarySetUnderTest[] = [
  {
    name: 'checkout and pay-by-code',
    dictionaries: checkoutDictionaries,
    sources: [
      'src/modules/checkout/pages.ts',
      'src/modules/checkout/routes.ts',
      ...templatesIn('src/modules/checkout/views'),
    ],
  },
  {
    name: 'payment link page and poster',
    dictionaries: linkPageDictionaries,
    sources: ['src/modules/links/pages.ts', ...templatesIn('src/modules/links/views')],
  },
  {
    name: 'storefront and customer order page',
    dictionaries: storefrontDictionaries,
    sources: [
      'src/modules/storefront/pages.ts',
      'src/modules/storefront/page-routes.ts',
      ...templatesIn('src/modules/storefront/views'),
    ],
  },
  {
    name: 'balance statements (CSV and printable page)',
    dictionaries: statementDictionaries,
    sources: [
      'src/modules/payments/statements.ts',
      'src/modules/payments/statement-csv.ts',
      'src/modules/payments/views/statement-head.eta',
      'src/modules/payments/views/statement-foot.eta',
    ],
  },
];

describe('customer page dictionaries (issue 19)', () => {
  for (const set of SETS) {
    test(`${set.name}: every language has every key, the same placeholders, and every key is read`, () => {
      assert.deepEqual(dictionaryProblems(set.dictionaries, readSources(set.sources)), []);
    });
  }

  test('the check fails on a missing key, an unknown key, a placeholder mismatch and an unused key', () => {
    const broken = {
      en: { greeting: 'Hello {name}', farewell: 'Bye', unread: 'Never shown' },
      fr: { greeting: 'Bonjour', farewell: 'Salut', unread: 'Jamais', extra: 'En trop' },
      ar: { greeting: 'مرحبا {name}', unread: 'أبدا' },
    } as unknown as DictionarySet;
    const source = "t.greeting + t['farewell']";
    assert.deepEqual(dictionaryProblems(broken, [source]).sort(), [
      'ar: missing key "farewell"',
      'fr: "greeting" has placeholders {}, English has {name}',
      'fr: key "extra" is not in the English dictionary',
      'unused key "unread": no source reads it',
    ]);
  });

  test('an English text is found in a page however its placeholders were filled, and only as whole words', () => {
    const english = { pay: 'Pay', refunded: '{refunded} of {paid} refunded.', locked: 'locked' };
    assert.deepEqual(englishLeaks('<p><bdi>45.00 MRU</bdi> of <bdi>125.00 MRU</bdi> refunded.</p>', english), [
      'refunded: "{refunded} of {paid} refunded."',
    ]);
    assert.deepEqual(englishLeaks('<button>Payer</button><input value="Pay">', english), ['pay: "Pay"']);
    assert.deepEqual(
      englishLeaks('<script type="application/json" id="d">{"texts":{"x":"wallet locked"}}</script>', english),
      ['locked: "locked"'],
    );
    assert.deepEqual(englishLeaks('<script>const locked=1;pay()</script><p id="pay">Payer</p>', english), []);
  });
});
