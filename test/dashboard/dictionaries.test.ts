import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, test } from 'vitest';
import { errorCatalogue } from '../../src/http/errors.js';
import { dictionaries, errorTexts } from '../../src/modules/dashboard/i18n.js';
import { dictionaryProblems, readSources } from '../support/i18n.js';

const DASHBOARD = 'src/modules/dashboard';

/**
 * Every file that reads the dashboard's keys: its routes and helpers, and every template, in every
 * folder; not the dictionaries themselves (texts/ and each page's texts.ts).
 */
function dashboardSources(): string[] {
  const dictionary = /(^|\/)(i18n\.ts$|texts\/|words\/)/;
  return readdirSync(DASHBOARD, { recursive: true, encoding: 'utf8' })
    .filter((name) => (name.endsWith('.ts') || name.endsWith('.eta')) && !dictionary.test(name))
    .map((name) => `${DASHBOARD}/${name}`);
}

describe('dashboard dictionaries (issue 38)', () => {
  test('en, fr and ar: every key in every language, the same placeholders, and every key read', () => {
    assert.deepEqual(dictionaryProblems(dictionaries, readSources(dashboardSources())), []);
  });

  test('every error code has its words in every language, and no word is left for a code that is gone', () => {
    // The catalogue's codes are what reads these keys: the dashboard words any code a service answers.
    const codes = Object.keys(errorCatalogue).map((code) => `'${code}'`);
    assert.deepEqual(dictionaryProblems(errorTexts, [codes.join('\n')]), []);
    assert.deepEqual(Object.keys(errorTexts.ar).sort(), Object.keys(errorCatalogue).sort());
  });

  test('the Arabic and French texts are not English left in place', () => {
    // Codes, units, brand-like words and punctuation that every language writes alike.
    const same = new Set(['TOF', 'TTE', 'CSV', ': ']);
    for (const lang of ['fr', 'ar'] as const) {
      const copied = Object.entries(dictionaries.en).filter(
        ([key, text]) => dictionaries[lang][key as keyof typeof dictionaries.en] === text && !same.has(text),
      );
      if (lang === 'ar') assert.deepEqual(copied, [], 'Arabic texts equal to the English ones');
    }
    for (const [code, text] of Object.entries(errorTexts.ar))
      assert.notEqual(text, errorTexts.en[code as keyof typeof errorTexts.en], code);
  });
});
