import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { isPublicAddress } from '../../src/modules/webhooks/ssrf.js';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';

const ENDPOINTS = '/api/v1/dev/webhooks/endpoints';

const REFUSED = [
  // IPv4 special ranges
  '0.0.0.0',
  '10.0.0.1',
  '100.64.0.1',
  '127.0.0.1',
  '169.254.169.254',
  '172.16.0.1',
  '192.0.0.1',
  '192.0.2.1',
  '192.88.99.1',
  '192.168.1.1',
  '198.18.0.1',
  '198.51.100.7',
  '203.0.113.1',
  '224.0.0.1',
  '240.0.0.1',
  '255.255.255.255',
  // IPv6 special ranges
  '::',
  '::1',
  'fc00::1',
  'fd00:ec2::254',
  'fe80::1',
  'fec0::1',
  'ff02::1',
  '2001:db8::1',
  '2001:2::1',
  '100::1',
  '3fff::1',
  '4000::1',
  '5f00::1',
  '64:ff9b:1::a00:1',
  // IPv6 forms carrying a non-public IPv4
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:0:7f00:1',
  '::127.0.0.1',
  '0:0:0:0:0:0:7f00:1',
  '::a9fe:a9fe',
  '64:ff9b::7f00:1',
  '64:ff9b::10.0.0.1',
  '2002:7f00:1::',
  '2002:a9fe:a9fe::1',
  '2002:c0a8:101::1',
  // Teredo: server 127.0.0.1, or a client (obfuscated) of 10.0.0.1
  '2001:0:7f00:1::1',
  '2001:0:5db8:1::f5ff:fffe',
  'not an address',
  '',
];
const ALLOWED = [
  '93.184.216.34',
  '8.8.8.8',
  '2606:4700:4700::1111',
  '2a00:1450:4007:80e::200e',
  // The same forms carrying a public IPv4 are judged by it
  '::ffff:93.184.216.34',
  '64:ff9b::808:808',
  '2002:5db8:d822::1',
  '2001:0:5db8:d822::f7f7:f7f7',
];

describe('webhook URL check: only global unicast, IPv4 inside IPv6 judged by itself (issue 15 item 7)', () => {
  test('address table', () => {
    for (const address of REFUSED) assert.equal(isPublicAddress(address), false, `${address} must be refused`);
    for (const address of ALLOWED) assert.equal(isPublicAddress(address), true, `${address} must pass`);
  });

  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  test('the forms the review got through are INVALID_WEBHOOK_URL over HTTP', async () => {
    const sk = (await t.createBusiness()).keys.secretTest;
    for (const host of ['[::127.0.0.1]', '[0:0:0:0:0:0:7f00:1]', '[2002:7f00:1::]', '[64:ff9b::a9fe:a9fe]']) {
      const response = await t.request('POST', ENDPOINTS, {
        key: sk,
        idempotencyKey: true,
        body: { url: `https://${host}/hook`, events: ['payment.created'] },
      });
      expectError(response, 400, 'INVALID_WEBHOOK_URL');
    }
  });

  test('WEBHOOK_ALLOW_PRIVATE still lets sandbox endpoints reach them', async () => {
    const dev = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    try {
      const owner = await dev.createBusiness();
      const response = await dev.request('POST', ENDPOINTS, {
        key: owner.keys.secretTest,
        idempotencyKey: true,
        body: { url: 'https://[::127.0.0.1]:9/hook', events: ['payment.created'] },
      });
      expectStatus(response, 201);
    } finally {
      await dev.close();
    }
  });
});
