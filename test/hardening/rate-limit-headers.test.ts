import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createIntent } from '../intents/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestResponse } from '../support/harness.js';

const HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

function expectLimitHeaders(response: TestResponse, limit?: number): void {
  for (const name of HEADERS) assert.match(response.headers.get(name) ?? '', /^[0-9]+$/, `${name}: ${response.text}`);
  if (limit !== undefined) assert.equal(Number(response.headers.get('x-ratelimit-limit')), limit);
}
function expectNoLimitHeaders(response: TestResponse): void {
  for (const name of HEADERS) assert.equal(response.headers.get(name), null, `${name} on ${response.status}`);
}

describe('rate-limit headers wherever a limit was counted (issue 15 item 13)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000', RATE_LIMIT_LIVE_PER_MINUTE: '2000' } });
  });
  afterAll(() => t.close());

  test('an authenticated request carries them on 2xx, 400, 403 and 404 alike', async () => {
    const business = await t.createBusiness();
    const { secretTest: sk, secretLive } = business.keys;
    const intent = await createIntent(t, sk, { amount: 500 });
    const answers: [TestResponse, number, string?][] = [
      [await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk }), 200],
      [await t.request('GET', '/api/v1/dev/intents/PI-NOPE', { key: sk }), 404, 'INTENT_NOT_FOUND'],
      [
        await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: secretLive }),
        403,
        'SANDBOX_MISMATCH',
      ],
      [await t.request('GET', '/api/v1/dev/intents?page=0', { key: sk }), 400, 'VALIDATION_ERROR'],
      [
        await t.request('POST', '/api/v1/dev/intents', { key: sk, body: { amount: 5 } }),
        400,
        'IDEMPOTENCY_KEY_REQUIRED',
      ],
      [await t.request('GET', '/api/v1/dev/store/products/prod_nope', { key: sk }), 404, 'PRODUCT_NOT_FOUND'],
    ];
    for (const [response, status, code] of answers) {
      if (code) expectError(response, status, code);
      else expectStatus(response, status);
      // The live key's own limit on its SANDBOX_MISMATCH, the test key's everywhere else.
      expectLimitHeaders(response, code === 'SANDBOX_MISMATCH' ? 2000 : 1000);
    }
  });

  test('the customer checkout API carries its per-address limit, 404 included', async () => {
    const missing = await t.request('GET', '/checkout/intents/nope00');
    expectError(missing, 404, 'INTENT_NOT_FOUND');
    expectLimitHeaders(missing, 120);
    const page = await t.request('GET', '/p/nope00');
    expectLimitHeaders(page, 120);
    // Paying counts two limits (address and wallet phone): the one closer to its end is shown.
    const sk = (await t.createBusiness()).keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 500 });
    const wrong = await t.request('POST', `/checkout/intents/${intent.shortCode}/pay`, {
      body: { phone: '+22299990001', pin: '1234' },
    });
    expectError(wrong, 401, 'INVALID_PIN');
    expectLimitHeaders(wrong, 20);
    assert.equal(wrong.headers.get('x-ratelimit-remaining'), '19');
  });

  test('answers refused before any limit is counted carry none: bad or unknown keys, unknown routes', async () => {
    expectNoLimitHeaders(await t.request('GET', '/api/v1/dev/balance'));
    expectNoLimitHeaders(await t.request('GET', '/api/v1/dev/balance', { key: 'sk_test_nope' }));
    expectNoLimitHeaders(await t.request('GET', '/api/v1/dev/nowhere'));
    expectNoLimitHeaders(await t.request('GET', '/health'));
  });
});
