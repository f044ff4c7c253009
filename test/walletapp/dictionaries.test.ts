import assert from 'node:assert/strict';
import { test } from 'vitest';
import { walletDictionaries } from '../../src/modules/walletapp/i18n.js';
import { dictionaryProblems, readSources } from '../support/i18n.js';

test('the wallet app speaks English, French and Arabic, every text read by its pages', () => {
  const sources = readSources([
    'src/modules/walletapp/pages.ts',
    'src/modules/walletapp/routes.ts',
    'src/modules/walletapp/forms.ts',
    'src/modules/walletapp/views/sign-in.eta',
    'src/modules/walletapp/views/home.eta',
  ]);
  assert.deepEqual(dictionaryProblems(walletDictionaries, sources), []);
});
