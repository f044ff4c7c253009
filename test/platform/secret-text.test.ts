import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'vitest';
import { secretBase62 } from '../../src/lib/ids.js';

const SRC = path.resolve(import.meta.dirname, '../../src');

test('secret text is base62 of the length asked, and never repeats', () => {
  const drawn = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const text = secretBase62(40);
    assert.match(text, /^[0-9A-Za-z]{40}$/);
    drawn.add(text);
  }
  assert.equal(drawn.size, 200);
});

/** Issue 49: secrets come from the system's generator, not from the pool of public ids. */
test('API keys, customer links and form tokens are drawn as secrets', () => {
  for (const file of ['modules/keys/key-text.ts', 'modules/orders/placement.ts', 'modules/dashboard/context.ts']) {
    const text = readFileSync(path.join(SRC, file), 'utf8');
    assert.ok(text.includes('secretBase62('), `${file} draws its secret with secretBase62`);
    assert.ok(!text.includes('randomBase62('), `${file} draws nothing from the shared pool`);
  }
});
