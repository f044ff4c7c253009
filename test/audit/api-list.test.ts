import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { recordAudit, SYSTEM_ACTOR } from '../../src/modules/audit/record.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createSeller } from '../sellers/support.js';
import { ENDPOINTS } from '../webhooks/support.js';
import { AUDIT_LOG, auditReader } from './support.js';

/** Issue 53 item 4: `GET /audit-log`, its filters, pages, modes and codes. */
describe('the audit log API', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let reader: string;

  const list = (query = '', key = reader) => t.request('GET', `${AUDIT_LOG}${query}`, { key });

  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        RATE_LIMIT_LIVE_PER_MINUTE: '100000',
        WEBHOOK_ALLOW_PRIVATE: 'true',
      },
    });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
    reader = await auditReader(t, business.id);
    // Five endpoint acts in test mode, a seller made in live mode, an operator's act (of no mode) and a task's.
    for (let i = 0; i < 3; i++) {
      const created = await t.request('POST', ENDPOINTS, {
        key: sk,
        idempotencyKey: true,
        body: { url: `http://127.0.0.1:9/${i}`, events: ['payment.confirmed'] },
      });
      expectStatus(created, 201);
      if (i === 0) {
        const id = created.body.data.id;
        expectStatus(
          await t.request('PATCH', `${ENDPOINTS}/${id}`, { key: sk, idempotencyKey: true, body: { active: false } }),
          200,
        );
        expectStatus(await t.request('DELETE', `${ENDPOINTS}/${id}`, { key: sk, idempotencyKey: true }), 200);
      }
    }
    await createSeller(t, business.keys.secretLive, { name: 'Live stall' });
    expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 100 }), 200);
    await recordAudit(t.runtime.db, {
      businessId: business.id,
      environment: null,
      action: 'settings.updated',
      actor: SYSTEM_ACTOR('a test task'),
    });
  });
  afterAll(() => t?.close());

  test("newest first: the key's mode and the acts of no mode, never the other mode's", async () => {
    const response = await list();
    expectStatus(response, 200);
    const { items, total, page, limit, hasMore } = response.body.data;
    assert.deepEqual(
      items.map((entry: any) => entry.action),
      [
        'settings.updated',
        'business.fees_changed',
        'webhook_endpoint.created',
        'webhook_endpoint.created',
        'webhook_endpoint.deleted',
        'webhook_endpoint.updated',
        'webhook_endpoint.created',
      ],
    );
    assert.deepEqual([total, page, limit, hasMore], [7, 1, 20, false]);
    const fees = items[1];
    assert.equal(fees.environment, null);
    assert.deepEqual(fees.actor, { kind: 'operator', id: null, label: 'operator' });
    assert.deepEqual(fees.target, { kind: 'business', id: business.id });
    assert.deepEqual(fees.details, { changed: ['payoutFeeFlat'], payoutFeeFlat: 100 });
    const endpoint = items[2];
    assert.equal(endpoint.environment, 'test');
    assert.equal(endpoint.actor.kind, 'api_key');
    assert.match(endpoint.actor.label, /^sk_test_/);
    assert.equal(typeof endpoint.ip, 'string');
    assert.match(endpoint.id, /^aud_/);
    assert.ok(!Number.isNaN(Date.parse(endpoint.createdAt)));

    const live = await list('', await auditReader(t, business.id, 'live'));
    assert.deepEqual(
      live.body.data.items.map((entry: any) => entry.action),
      ['settings.updated', 'business.fees_changed', 'seller.created'],
    );
    // Another business's log is its own.
    const other = await t.createBusiness();
    assert.equal((await list('', await auditReader(t, other.id))).body.data.total, 0);
  });

  test('pages: limit and page, hasMore, in the same order', async () => {
    const all = (await list()).body.data.items.map((entry: any) => entry.id);
    const first = (await list('?limit=3')).body.data;
    const second = (await list('?limit=3&page=2')).body.data;
    const third = (await list('?limit=3&page=3')).body.data;
    assert.equal(first.hasMore, true);
    assert.equal(third.hasMore, false);
    assert.deepEqual(
      [...first.items, ...second.items, ...third.items].map((entry: any) => entry.id),
      all,
    );
  });

  test('filters: action, actor (a key id, operator, system), from and to', async () => {
    const created = await list('?action=webhook_endpoint.created');
    assert.equal(created.body.data.total, 3);
    const keyId = business.keyRecords.find((key) => key.kind === 'secret' && key.environment === 'test')!.id;
    assert.equal((await list(`?actor=${keyId}`)).body.data.total, 5);
    const operator = await list('?actor=operator');
    assert.deepEqual(
      operator.body.data.items.map((entry: any) => entry.action),
      ['business.fees_changed'],
    );
    const system = await list('?actor=system');
    assert.deepEqual(
      system.body.data.items.map((entry: any) => entry.actor),
      [{ kind: 'system', id: null, label: 'a test task' }],
    );
    assert.equal((await list('?actor=usr_nobody')).body.data.total, 0);

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    assert.equal((await list(`?from=${tomorrow}`)).body.data.total, 0);
    assert.equal((await list(`?from=${yesterday}&to=${tomorrow}`)).body.data.total, 7);
    assert.equal((await list(`?to=${yesterday}`)).body.data.total, 0);
  });

  test('codes: an unknown action, from after to, a bad date, a key without audit:read, a publishable key', async () => {
    expectError(await list('?action=payment.teleported'), 400, 'VALIDATION_ERROR');
    expectError(await list('?from=2026-05-02&to=2026-05-01'), 400, 'VALIDATION_ERROR');
    expectError(await list('?from=2026-02-30'), 400, 'VALIDATION_ERROR');
    expectError(await list('?limit=0'), 400, 'VALIDATION_ERROR');
    expectError(await list('?sort=asc'), 400, 'VALIDATION_ERROR');
    const narrow = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['webhooks:read'],
    });
    expectStatus(narrow, 201);
    const refused = await list('', narrow.body.data.key);
    expectError(refused, 403, 'SCOPE_REQUIRED');
    assert.match(refused.body.error.message, /audit:read/);
    expectError(await list('', business.keys.publishableTest), 403, 'SECRET_KEY_REQUIRED');
    expectError(await t.request('GET', AUDIT_LOG), 401, 'MISSING_CREDENTIALS');
  });

  test('a key created without a list of scopes cannot read the log (audit:read is never a default)', async () => {
    const plain = await t.admin('POST', '/keys', { businessId: business.id, kind: 'secret', environment: 'test' });
    expectStatus(plain, 201);
    expectError(await list('', plain.body.data.key), 403, 'SCOPE_REQUIRED');
    expectError(await list('', business.keys.secretTest), 403, 'SCOPE_REQUIRED');
  });
});
