import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'vitest';
import type { FastifyRequest } from 'fastify';
import fc from 'fast-check';
import { requestFingerprint } from '../../src/http/idempotency/fingerprint.js';
import { findNul } from '../../src/http/validation.js';

/** The recursive definition the iterative fingerprint must keep matching. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const request = { method: 'POST', url: '/x' } as FastifyRequest;
const expected = (body: unknown) => createHash('sha256').update('POST /x\n').update(reference(body)).digest('hex');

describe('the idempotency fingerprint and the NUL scan walk without recursion (issue 15 item 3)', () => {
  test('same fingerprint as the recursive definition, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (body) => {
        assert.equal(requestFingerprint(request, body), expected(body));
      }),
      { numRuns: 500 },
    );
    assert.equal(requestFingerprint(request, { b: 1, a: undefined, c: [undefined] }), expected({ b: 1, c: [null] }));
  });

  test('a value nested 100,000 deep is hashed and scanned without a stack overflow', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? { a: deep } : [deep];
    assert.match(requestFingerprint(request, deep), /^[0-9a-f]{64}$/);
    assert.equal(findNul(deep), undefined);
  });

  test('findNul names the first string or key holding NUL', () => {
    assert.equal(findNul({ a: ['x', 'y\u0000'] }), '/a/1');
    assert.equal(findNul({ 'k\u0000': 1 }), '/k\u0000');
    assert.equal(findNul({ 'a/b': { c: 'd\u0000' } }), '/a~1b/c');
    assert.equal(findNul({ a: 'clean', b: [1, null, true] }), undefined);
  });
});
