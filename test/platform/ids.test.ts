/**
 * Random ids (src/lib/ids.ts) draw their bytes from a pool: every character of the alphabet stays
 * equally likely across many refills of the pool, and ids do not repeat.
 */
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { newId, randomBase62, randomDigits } from '../../src/lib/ids.js';

test('base62 text: the length asked, the 62 characters equally likely over many pool refills', () => {
  const counts = new Map<string, number>();
  const draws = 2_000;
  for (let i = 0; i < draws; i++) {
    const text = randomBase62(31);
    assert.match(text, /^[0-9A-Za-z]{31}$/);
    for (const character of text) counts.set(character, (counts.get(character) ?? 0) + 1);
  }
  // 62,000 characters (15 refills of the 4 KiB pool): 1,000 expected each, a standard deviation
  // of about 31; a bias of 1/62 in a character would move it by 16, a broken pool by far more.
  assert.equal(counts.size, 62);
  for (const [character, count] of counts) {
    assert.ok(count > 800 && count < 1_200, `${character} drawn ${count} times of ~1,000`);
  }
});

test('ids are prefixed, sortable by time and distinct', () => {
  const ids = Array.from({ length: 5_000 }, () => newId('evt'));
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.match(id, /^evt_[0-9a-z]{10}[0-9A-Za-z]{14}$/);
  const times = ids.map((id) => id.slice(4, 14));
  assert.ok(
    times.every((time, i) => i === 0 || times[i - 1]! <= time),
    'the time part never goes back',
  );
  assert.match(randomDigits(16), /^[0-9]{16}$/);
});
