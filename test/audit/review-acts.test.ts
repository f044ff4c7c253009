import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { ENDPOINTS } from '../webhooks/support.js';
import { entriesOf } from './support.js';

/** Acts the first audit pass missed: the operator's key suspension, and a webhook URL's token kept out. */
describe('audit entries: the operator suspends a key; an endpoint URL without its query', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(() => t.close());

  test('the operator suspends a key: one entry, by the operator, none for a second suspend', async () => {
    const business = await t.createBusiness();
    const made = await t.admin('POST', '/keys', { businessId: business.id, kind: 'secret', environment: 'test' });
    expectStatus(made, 201);
    const id = made.body.data.id as string;
    expectStatus(await t.admin('POST', `/keys/${id}/suspend`), 200);
    expectStatus(await t.admin('POST', `/keys/${id}/suspend`), 200);
    const entries = await entriesOf(t, business.id, 'api_key.suspended');
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.actor_kind, 'operator');
    assert.equal(entries[0]!.target_id, id);
  });

  test("a webhook endpoint's URL is recorded without its query (a receiver's token stays out of the log)", async () => {
    const business = await t.createBusiness();
    const created = await t.request('POST', ENDPOINTS, {
      key: business.keys.secretTest,
      body: { url: 'http://127.0.0.1:9/in?token=s3cret#x', events: ['payment.confirmed'] },
      idempotencyKey: true,
    });
    expectStatus(created, 201);
    const [entry] = await entriesOf(t, business.id, 'webhook_endpoint.created');
    assert.equal(entry!.details.url, 'http://127.0.0.1:9/in');
    assert.ok(!JSON.stringify(entry!.details).includes('s3cret'));
  });
});
