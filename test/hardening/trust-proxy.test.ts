import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { ConfigError, parseTrustProxy } from '../../src/config.js';
import { addressSubject } from '../../src/http/client-address.js';
import { manualClock } from '../support/clock.js';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { probeRoutes } from '../support/probe-routes.js';

const READ = '/api/v1/dev/probe/read';
const SPOOFED = '10.1.2.3, 198.51.100.7';

/** An app with this TRUST_PROXY and a key that only 10.0.0.0/8 may use. */
async function withProxySetting(setting: string, run: (t: TestApp, key: string) => Promise<void>) {
  // A still limiter clock: the per-address test's 130 requests then fall in one window however
  // long they take (with the wall clock they could straddle a minute and never be limited).
  const t = await startTestApp({ routes: [probeRoutes], config: { TRUST_PROXY: setting }, clock: manualClock() });
  try {
    const business = await t.createBusiness();
    const created = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      ipAllowlist: ['10.0.0.0/8'],
    });
    expectStatus(created, 201);
    await run(t, created.body.data.key);
  } finally {
    await t.close();
  }
}

const read = (t: TestApp, key: string, forwardedFor?: string) =>
  t.request('GET', READ, { key, ...(forwardedFor ? { headers: { 'x-forwarded-for': forwardedFor } } : {}) });

describe('TRUST_PROXY: a hop count or a list of proxies, never the client-written left-most address (issue 15 item 2)', () => {
  test('parsing: false, counts, true as one hop, lists; anything else fails fast', () => {
    assert.equal(parseTrustProxy('false'), false);
    assert.equal(parseTrustProxy('0'), false);
    assert.equal(parseTrustProxy('true'), 1);
    assert.equal(parseTrustProxy('1'), 1);
    assert.equal(parseTrustProxy('2'), 2);
    assert.deepEqual(parseTrustProxy('127.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback'), [
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
    for (const bad of ['yes', '10.0.0.0/33', '::1/129', '10.0.0.300', '10.0.0.0/8/1', 'all'])
      assert.throws(() => parseTrustProxy(bad), ConfigError, bad);
  });

  test('one hop (TRUST_PROXY=true): the client is the address the proxy appended, the right-most', async () => {
    await withProxySetting('true', async (t, key) => {
      expectError(await read(t, key, SPOOFED), 403, 'IP_NOT_ALLOWED');
      expectStatus(await read(t, key, '198.51.100.7, 10.1.2.3'), 200);
      expectError(await read(t, key), 403, 'IP_NOT_ALLOWED');
    });
  });

  test('two hops: the second address from the right is the client', async () => {
    await withProxySetting('2', async (t, key) => {
      expectStatus(await read(t, key, SPOOFED), 200);
      expectError(await read(t, key, '10.1.2.3, 198.51.100.7, 203.0.113.1'), 403, 'IP_NOT_ALLOWED');
    });
  });

  test('a list of proxies: trusted addresses are skipped from the right, the first other one is the client', async () => {
    await withProxySetting('127.0.0.1', async (t, key) => {
      expectError(await read(t, key, SPOOFED), 403, 'IP_NOT_ALLOWED');
    });
    await withProxySetting('loopback, 198.51.100.0/24', async (t, key) => {
      expectStatus(await read(t, key, SPOOFED), 200);
    });
    // The peer is not a listed proxy: X-Forwarded-For is ignored altogether.
    await withProxySetting('192.0.2.1', async (t, key) => {
      expectError(await read(t, key, '10.1.2.3'), 403, 'IP_NOT_ALLOWED');
    });
  });

  test('per-address limits cannot be dodged by rotating the left-most X-Forwarded-For', async () => {
    await withProxySetting('1', async (t) => {
      let limited = false;
      for (let i = 0; i < 130 && !limited; i++) {
        const response = await t.request('GET', '/checkout/intents/nope00', {
          headers: { 'x-forwarded-for': `10.0.${i >> 8}.${i & 255}, 198.51.100.7` },
        });
        if (response.status === 429) limited = true;
        else expectError(response, 404, 'INTENT_NOT_FOUND');
      }
      assert.ok(limited, 'the per-address checkout limit applied to 198.51.100.7');
    });
  });
});

describe('per-address limits count an IPv6 client by its /64 and a mapped IPv4 address as itself (issue 36 item 2)', () => {
  test('the subject: /64 with :: expanded, IPv4-mapped folded, IPv4 unchanged', () => {
    assert.equal(addressSubject('2001:db8::1'), addressSubject('2001:db8:0:0:ffff::2'));
    assert.equal(addressSubject('2001:DB8:0:0:1:2:3:4'), addressSubject('2001:db8::'));
    assert.notEqual(addressSubject('2001:db8::1'), addressSubject('2001:db8:0:1::1'));
    assert.equal(addressSubject('::ffff:198.51.100.7'), '198.51.100.7');
    assert.equal(addressSubject('::ffff:c633:6407'), '198.51.100.7');
    assert.equal(addressSubject('198.51.100.7'), '198.51.100.7');
    assert.notEqual(addressSubject('::1'), addressSubject('::ffff:0.0.0.1'));
  });

  const lookup = (t: TestApp, client: string) =>
    t.request('GET', '/checkout/intents/nope00', { headers: { 'x-forwarded-for': client } });

  test('130 lookups from 130 addresses of one /64 are refused after 120; another /64 is not', async () => {
    await withProxySetting('1', async (t) => {
      const statuses: number[] = [];
      for (let i = 0; i < 130; i++) {
        // Each a different address, written differently (:: or not), all in 2001:db8:1:2::/64.
        const client = i % 2 ? `2001:db8:1:2::${(i + 1).toString(16)}` : `2001:db8:1:2:${i.toString(16)}:0:0:1`;
        statuses.push((await lookup(t, client)).status);
      }
      assert.deepEqual(
        statuses.slice(0, 120),
        Array.from({ length: 120 }, () => 404),
      );
      assert.deepEqual(
        statuses.slice(120),
        Array.from({ length: 10 }, () => 429),
      );
      expectError(await lookup(t, '2001:db8:1:3::1'), 404, 'INTENT_NOT_FOUND');
    });
  });

  test('an IPv4-mapped IPv6 address shares the IPv4 address counter', async () => {
    await withProxySetting('1', async (t) => {
      for (let i = 0; i < 60; i++) expectError(await lookup(t, '198.51.100.9'), 404, 'INTENT_NOT_FOUND');
      for (let i = 0; i < 60; i++) expectError(await lookup(t, '::ffff:198.51.100.9'), 404, 'INTENT_NOT_FOUND');
      expectError(await lookup(t, '::ffff:c633:6409'), 429, 'RATE_LIMITED');
      expectError(await lookup(t, '198.51.100.9'), 429, 'RATE_LIMITED');
      expectError(await lookup(t, '198.51.100.10'), 404, 'INTENT_NOT_FOUND');
    });
  });
});
