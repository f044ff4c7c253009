import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, startTestApp, type TestApp } from '../support/harness.js';

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
    const rows = await t.runtime.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('business_id', '=', business.id)
      .where('deleted_at', 'is', null)
      .execute();
    assert.equal(rows.length, 5);
  });
});
