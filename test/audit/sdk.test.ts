import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { Commerce, InvalidRequestError, PermissionError } from '@commerce-developer-api/sdk';
import type { AuditEntry } from '@commerce-developer-api/sdk';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';
import { auditReader } from './support.js';

/** Issue 53 item 5: the audit log through the SDK. */
describe('auditLog through the SDK', () => {
  let t: TestApp;
  let business: TestBusiness;
  let commerce: Commerce;
  let reader: Commerce;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'SDK audit' });
    commerce = new Commerce(business.keys.secretTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
    reader = new Commerce(await auditReader(t, business.id), { baseUrl: t.baseUrl, fetch: checkedFetch });
  });
  afterAll(() => t.close());

  test('list: filters, a page, every page with for await; an unknown action and a narrow key refused', async () => {
    const made = [];
    for (const name of ['A', 'B', 'C']) made.push(await commerce.sellers.create({ name, phone: '+22236000031' }));
    const page = await reader.auditLog.list({ action: 'seller.created', limit: 2 });
    assert.equal(page.total, 3);
    assert.equal(page.hasMore, true);
    const first: AuditEntry = page.items[0]!;
    assert.deepEqual(first.target, { kind: 'seller', id: made[2]!.id });
    assert.equal(first.actor.kind, 'api_key');
    const all: string[] = [];
    for await (const entry of reader.auditLog.list({ limit: 1 })) all.push(entry.target?.id ?? '');
    assert.deepEqual(all, made.map((seller) => seller.id).reverse());

    await assert.rejects(
      reader.auditLog.list({ action: 'nope' as AuditEntry['action'] }).then((p) => p),
      InvalidRequestError,
    );
    const narrow = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['sellers:read'],
    });
    expectStatus(narrow, 201);
    const limited = new Commerce(narrow.body.data.key, { baseUrl: t.baseUrl, fetch: checkedFetch });
    await assert.rejects(
      limited.auditLog.list().then((p) => p),
      (error: unknown) => error instanceof PermissionError && error.code === 'SCOPE_REQUIRED',
    );
  });
});
