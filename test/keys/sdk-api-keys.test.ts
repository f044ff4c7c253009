import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { AuthenticationError, Commerce, PermissionError } from '@commerce-developer-api/sdk';
import type { ApiKey, WebhookEventName, WebhookEventOf } from '@commerce-developer-api/sdk';
import { allScopes } from '../../src/modules/keys/scopes.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';

// Compile-time: the key events are part of the SDK's webhook event union, without a secret.
const ROLLED: WebhookEventName = 'api_key.rolled';
const successorOf = (event: WebhookEventOf<'api_key.rolled'>) => [event.data.replacedBy, event.data.hint] as const;

/** Issue 53 item 3 through the SDK: apiKeys.list, create, roll, revoke. */
describe('API keys through the SDK', () => {
  let t: TestApp;
  let business: TestBusiness;
  let commerce: Commerce;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'SDK keys' });
    const manager = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: [...allScopes],
    });
    expectStatus(manager, 201);
    commerce = new Commerce(manager.body.data.key, { baseUrl: t.baseUrl, fetch: checkedFetch });
  });
  afterAll(() => t.close());

  test('create, list, roll with an overlap, revoke; escalation is a PermissionError', async () => {
    assert.equal(ROLLED, 'api_key.rolled');
    void successorOf;
    const made = await commerce.apiKeys.create({ name: 'SDK till', kind: 'secret', scopes: ['intents:read'] });
    assert.match(made.key!, /^sk_test_/);
    const ids: string[] = [];
    for await (const key of commerce.apiKeys.list({ limit: 2 })) ids.push((key as ApiKey).id);
    assert.ok(ids.includes(made.id));

    const successor = await commerce.apiKeys.roll(made.id, { expiresIn: 3600 });
    assert.equal(successor.name, 'SDK till');
    const old = new Commerce(made.key!, { baseUrl: t.baseUrl, fetch: checkedFetch });
    await old.balance.retrieve();
    const revoked = await commerce.apiKeys.revoke(made.id);
    assert.equal(revoked.status, 'revoked');
    await assert.rejects(old.balance.retrieve(), PermissionError);

    const limited = new Commerce(successor.key!, { baseUrl: t.baseUrl, fetch: checkedFetch });
    await assert.rejects(async () => {
      await limited.apiKeys.list();
    }, PermissionError);
    const expired = await commerce.apiKeys.create({
      name: 'Soon gone',
      kind: 'secret',
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    await t.runtime.db
      .updateTable('api_keys')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', expired.id)
      .execute();
    t.runtime.keyCache.clear();
    const gone = new Commerce(expired.key!, { baseUrl: t.baseUrl, fetch: checkedFetch, maxRetries: 0 });
    await assert.rejects(gone.balance.retrieve(), AuthenticationError);
  });
});
