import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';

const ENDPOINTS = '/api/v1/dev/webhooks/endpoints';

describe('five webhook endpoints per business across environments (issue 15 item 11)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  test('creates racing in both environments at once never make more than five', async () => {
    const business = await t.createBusiness();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.request('POST', ENDPOINTS, {
          key: i % 2 ? business.keys.secretLive : business.keys.secretTest,
          idempotencyKey: true,
          body: { url: `https://93.184.216.34/hook/${i}`, events: ['payment.created'] },
        }),
      ),
    );
    assert.equal(responses.filter((r) => r.status === 201).length, 5);
    for (const response of responses.filter((r) => r.status !== 201))
      expectError(response, 400, 'MAX_ENDPOINTS_REACHED');
    let listed = 0;
    for (const key of [business.keys.secretTest, business.keys.secretLive]) {
      const list = await t.request('GET', ENDPOINTS, { key });
      expectStatus(list, 200);
      listed += list.body.data.total;
    }
    assert.equal(listed, 5);
  });
});
