import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sendExpiringNotices } from '../../src/modules/api-keys/expiring.js';
import { adminCli } from '../support/admin-cli.js';
import {
  expectError,
  expectStatus,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';

const KEYS = '/api/v1/dev/api-keys';
const BALANCE = '/api/v1/dev/balance';

/**
 * API keys through the API (issue 53 item 3, decision 084): list, create, roll with an overlap,
 * revoke; no escalation of scopes or environment; the audit entries and events of each act.
 */
describe('API keys through the API', () => {
  let t: TestApp;
  let business: TestBusiness;
  /** A test secret key holding every scope, api_keys:write included. */
  let manager: { id: string; key: string };

  async function operatorKey(
    owner: TestBusiness,
    body: { kind?: string; environment?: string; scopes?: string[] },
  ): Promise<{ id: string; key: string }> {
    const created = await t.admin('POST', '/keys', {
      businessId: owner.id,
      kind: body.kind ?? 'secret',
      environment: body.environment ?? 'test',
      ...(body.scopes ? { scopes: body.scopes } : {}),
    });
    expectStatus(created, 201);
    return { id: created.body.data.id, key: created.body.data.key };
  }

  const create = (key: string, body: unknown, idempotencyKey: string | true = true) =>
    t.request('POST', KEYS, { key, body, idempotencyKey });
  const roll = (key: string, id: string, expiresIn: number) =>
    t.request('POST', `${KEYS}/${id}/roll`, { key, body: { expiresIn }, idempotencyKey: true });
  const revoke = (key: string, id: string) => t.request('POST', `${KEYS}/${id}/revoke`, { key, idempotencyKey: true });
  const audit = (targetId: string) =>
    t.runtime.db
      .selectFrom('audit_log')
      .select(['action', 'actor_kind', 'actor_id', 'actor_label', 'environment', 'details'])
      .where('target_id', '=', targetId)
      .orderBy('seq')
      .execute();
  const events = (subject: string) =>
    t.runtime.db.selectFrom('events').select(['event', 'body']).where('subject', '=', subject).orderBy('seq').execute();

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    const { allScopes } = await import('../../src/modules/keys/scopes.js');
    manager = await operatorKey(business, { scopes: [...allScopes] });
  });
  afterAll(() => t?.close());

  test('a key without api_keys:write (the default scopes) cannot list or make keys: SCOPE_REQUIRED', async () => {
    expectError(await t.request('GET', KEYS, { key: business.keys.secretTest }), 403, 'SCOPE_REQUIRED');
    expectError(await create(business.keys.secretTest, { name: 'x', kind: 'secret' }), 403, 'SCOPE_REQUIRED');
    expectError(await t.request('GET', KEYS, { key: business.keys.publishableTest }), 403, 'SECRET_KEY_REQUIRED');
  });

  test('create: the secret once (a replay answers without it), audited with the key as actor', async () => {
    const body = { name: '  Till 2 ', kind: 'secret', scopes: ['intents:read'], ipAllowlist: ['127.0.0.1'] };
    const first = await create(manager.key, body, 'create-till-2');
    expectStatus(first, 201);
    const made = first.body.data;
    assert.equal(made.name, 'Till 2');
    assert.match(made.key, /^sk_test_/);
    assert.deepEqual(made.scopes, ['intents:read']);
    assert.equal(made.environment, 'test');
    assert.equal(made.status, 'active');
    assert.equal(made.expiresAt, null);
    const replay = await create(manager.key, body, 'create-till-2');
    expectStatus(replay, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.data.id, made.id);
    assert.equal(replay.body.data.key, undefined, 'the secret is never stored under the idempotency key');

    expectStatus(await t.request('GET', BALANCE, { key: made.key }), 200);
    expectError(await t.request('GET', '/api/v1/dev/payouts', { key: made.key }), 403, 'SCOPE_REQUIRED');

    const entries = await audit(made.id);
    assert.deepEqual(
      entries.map((entry) => [entry.action, entry.actor_kind, entry.actor_id, entry.environment]),
      [['api_key.created', 'api_key', manager.id, 'test']],
    );
    assert.ok(!JSON.stringify(entries).includes(made.key), 'no secret in the audit log');
  });

  test('list: masked, newest first, paginated, with lastUsedAt to the minute and lastUsedIp', async () => {
    const made = (await create(manager.key, { name: 'Reader', kind: 'secret', scopes: ['intents:read'] })).body.data;
    expectStatus(await t.request('GET', BALANCE, { key: made.key }), 200);
    const listed = await waitUntil(async () => {
      const page = await t.request('GET', `${KEYS}?limit=100`, { key: manager.key });
      expectStatus(page, 200);
      const item = page.body.data.items.find((key: { id: string }) => key.id === made.id);
      return item?.lastUsedAt ? { page, item } : undefined;
    }, 'the key marked used');
    assert.equal(listed.item.lastUsedIp, '127.0.0.1');
    assert.equal(new Date(listed.item.lastUsedAt).getUTCSeconds(), 0, 'to the minute');
    assert.equal(listed.item.key, undefined);
    assert.match(listed.item.hint, /^sk_test_\.\.\./);
    assert.ok(!listed.page.text.includes(made.key), 'the list never shows a secret');
    assert.equal(listed.page.body.data.items[0].id, made.id, 'newest first');
    assert.ok(listed.page.body.data.items.every((key: { environment: string }) => key.environment === 'test'));

    const one = await t.request('GET', `${KEYS}?limit=1&page=2`, { key: manager.key });
    expectStatus(one, 200);
    assert.equal(one.body.data.items.length, 1);
    assert.equal(one.body.data.hasMore, true);
  });

  test('no escalation: a scope the key lacks (SCOPE_ESCALATION), the other environment (SANDBOX_MISMATCH)', async () => {
    const limited = await operatorKey(business, { scopes: ['api_keys:write', 'intents:read'] });
    const refused = await create(limited.key, {
      name: 'More',
      kind: 'secret',
      scopes: ['intents:read', 'payouts:write'],
    });
    expectError(refused, 403, 'SCOPE_ESCALATION');
    assert.match(refused.body.error.message, /payouts:write/);

    // Without a list: the default scopes it holds, never more.
    const defaults = await create(limited.key, { name: 'Defaults', kind: 'secret' });
    expectStatus(defaults, 201);
    assert.deepEqual(defaults.body.data.scopes, ['intents:read']);

    // Rolling a key gives its scopes again: a key lacking one of them cannot roll it.
    expectError(await roll(limited.key, manager.id, 0), 403, 'SCOPE_ESCALATION');

    expectError(
      await create(manager.key, { name: 'Live', kind: 'secret', environment: 'live' }),
      403,
      'SANDBOX_MISMATCH',
    );
    const live = business.keyRecords.find((key) => key.kind === 'secret' && key.environment === 'live')!;
    expectError(await roll(manager.key, live.id, 0), 403, 'SANDBOX_MISMATCH');
    expectError(await revoke(manager.key, live.id), 403, 'SANDBOX_MISMATCH');
    expectStatus(await t.request('GET', BALANCE, { key: live.key }), 200);

    const other = await t.createBusiness();
    const theirs = other.keyRecords.find((key) => key.kind === 'secret' && key.environment === 'test')!;
    expectError(await roll(manager.key, theirs.id, 0), 404, 'API_KEY_NOT_FOUND');
    expectError(await revoke(manager.key, theirs.id), 404, 'API_KEY_NOT_FOUND');
    expectError(await revoke(manager.key, 'key_nope'), 404, 'API_KEY_NOT_FOUND');
    expectStatus(await t.request('GET', BALANCE, { key: theirs.key }), 200);
  });

  test('no escalation in time: a key with an expiry (a rolled key in its overlap) makes no key that outlives it', async () => {
    const old = await operatorKey(business, { scopes: ['api_keys:write', 'intents:read'] });
    const successor = (await roll(manager.key, old.id, 3600)).body.data;
    expectStatus(await t.request('GET', KEYS, { key: old.key }), 200);
    const lasting = await create(old.key, { name: 'Lasting', kind: 'secret', scopes: ['intents:read'] });
    expectError(lasting, 403, 'SCOPE_ESCALATION');
    assert.match(lasting.body.error.message, /outlives/);
    const later = new Date(Date.now() + 7200_000).toISOString();
    expectError(
      await create(old.key, { name: 'Later', kind: 'secret', scopes: ['intents:read'], expiresAt: later }),
      403,
      'SCOPE_ESCALATION',
    );
    expectError(await roll(old.key, successor.id, 0), 403, 'SCOPE_ESCALATION');
    const sooner = new Date(Date.now() + 600_000).toISOString();
    expectStatus(
      await create(old.key, { name: 'Sooner', kind: 'secret', scopes: ['intents:read'], expiresAt: sooner }),
      201,
    );
  });

  test('bad input: a publishable key with a write scope, a past expiry, a bad allowlist, an overlap over 7 days', async () => {
    expectError(
      await create(manager.key, { name: 'Web', kind: 'publishable', scopes: ['intents:write'] }),
      400,
      'VALIDATION_ERROR',
    );
    const web = await create(manager.key, { name: 'Web', kind: 'publishable' });
    expectStatus(web, 201);
    assert.ok(web.body.data.scopes.length > 0);
    assert.ok(web.body.data.scopes.every((scope: string) => scope.endsWith(':read')));
    assert.match(web.body.data.key, /^pk_test_/);

    const past = new Date(Date.now() - 1000).toISOString();
    expectError(await create(manager.key, { name: 'Old', kind: 'secret', expiresAt: past }), 400, 'VALIDATION_ERROR');
    expectError(
      await create(manager.key, { name: 'Net', kind: 'secret', ipAllowlist: ['10.0.0.0/99'] }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await create(manager.key, { name: ' ', kind: 'secret' }), 400, 'VALIDATION_ERROR');
    expectError(await create(manager.key, { kind: 'secret' }), 400, 'VALIDATION_ERROR');
    const target = (await create(manager.key, { name: 'Target', kind: 'secret' })).body.data;
    expectError(await roll(manager.key, target.id, 604_801), 400, 'VALIDATION_ERROR');
    expectError(await roll(manager.key, target.id, -1), 400, 'VALIDATION_ERROR');
  });

  test('roll: the successor works at once, the old key during its overlap, then INVALID_API_KEY', async () => {
    const old = (await create(manager.key, { name: 'Till 3', kind: 'secret', scopes: ['intents:read'] })).body.data;
    const rolled = await roll(manager.key, old.id, 1);
    expectStatus(rolled, 201);
    const successor = rolled.body.data;
    assert.notEqual(successor.id, old.id);
    assert.equal(successor.name, 'Till 3');
    assert.deepEqual(successor.scopes, ['intents:read']);
    assert.match(successor.key, /^sk_test_/);
    expectStatus(await t.request('GET', BALANCE, { key: successor.key }), 200);
    expectStatus(await t.request('GET', BALANCE, { key: old.key }), 200);

    const listed = (await t.request('GET', `${KEYS}?limit=100`, { key: manager.key })).body.data.items;
    const oldListed = listed.find((key: { id: string }) => key.id === old.id);
    assert.equal(oldListed.status, 'rotated');
    assert.equal(oldListed.replacedBy, successor.id);
    assert.ok(oldListed.expiresAt);

    expectError(await roll(manager.key, old.id, 0), 409, 'API_KEY_NOT_ACTIVE');

    await sleep(Math.max(0, new Date(oldListed.expiresAt).getTime() - Date.now()) + 150);
    expectError(await t.request('GET', BALANCE, { key: old.key }), 401, 'INVALID_API_KEY');
    expectStatus(await t.request('GET', BALANCE, { key: successor.key }), 200);
    const after = (await t.request('GET', `${KEYS}?limit=100`, { key: manager.key })).body.data.items;
    assert.equal(after.find((key: { id: string }) => key.id === old.id).status, 'rotated');

    const [rolledEvent] = await events(old.id);
    assert.equal(rolledEvent!.event, 'api_key.rolled');
    const data = JSON.parse(rolledEvent!.body).data;
    assert.equal(data.replacedBy, successor.id);
    assert.equal(data.status, 'rotated');
    assert.ok(!rolledEvent!.body.includes(old.key) && !rolledEvent!.body.includes(successor.key), 'no secret');
    assert.deepEqual(
      (await audit(old.id)).map((entry) => [entry.action, entry.actor_kind, entry.actor_id]),
      [
        ['api_key.created', 'api_key', manager.id],
        ['api_key.rolled', 'api_key', manager.id],
      ],
    );
  });

  test('roll with expiresIn 0: the old key is refused at once', async () => {
    const old = (await create(manager.key, { name: 'Now', kind: 'secret', scopes: ['intents:read'] })).body.data;
    const successor = (await roll(manager.key, old.id, 0)).body.data;
    expectError(await t.request('GET', BALANCE, { key: old.key }), 401, 'INVALID_API_KEY');
    expectStatus(await t.request('GET', BALANCE, { key: successor.key }), 200);
  });

  test('revoke: at once (a rolled key in its overlap too), api_key.revoked once, a repeat changes nothing', async () => {
    const old = (await create(manager.key, { name: 'Leaked', kind: 'secret', scopes: ['intents:read'] })).body.data;
    const successor = (await roll(manager.key, old.id, 3600)).body.data;
    expectStatus(await t.request('GET', BALANCE, { key: old.key }), 200);
    const revoked = await revoke(manager.key, old.id);
    expectStatus(revoked, 200);
    assert.equal(revoked.body.data.status, 'revoked');
    expectError(await t.request('GET', BALANCE, { key: old.key }), 403, 'API_ACCESS_NOT_ACTIVE');
    expectStatus(await t.request('GET', BALANCE, { key: successor.key }), 200);
    expectStatus(await revoke(manager.key, old.id), 200);
    assert.deepEqual(
      (await events(old.id)).map((event) => event.event),
      ['api_key.rolled', 'api_key.revoked'],
    );
    assert.deepEqual(
      (await audit(old.id)).map((entry) => entry.action),
      ['api_key.created', 'api_key.rolled', 'api_key.revoked'],
    );
    expectError(await roll(manager.key, old.id, 0), 409, 'API_KEY_NOT_ACTIVE');
  });

  test('a key made with an expiry works until it, then INVALID_API_KEY', async () => {
    const expiresAt = new Date(Date.now() + 1200).toISOString();
    const made = await create(manager.key, { name: 'Brief', kind: 'secret', scopes: ['intents:read'], expiresAt });
    expectStatus(made, 201);
    assert.equal(made.body.data.expiresAt, expiresAt);
    expectStatus(await t.request('GET', BALANCE, { key: made.body.data.key }), 200);
    await sleep(Math.max(0, new Date(expiresAt).getTime() - Date.now()) + 150);
    expectError(await t.request('GET', BALANCE, { key: made.body.data.key }), 401, 'INVALID_API_KEY');
    const listed = (await t.request('GET', `${KEYS}?limit=100`, { key: manager.key })).body.data.items;
    assert.equal(listed.find((key: { id: string }) => key.id === made.body.data.id).status, 'expired');
  });

  test('api_key.expiring: once per key, 24 h before its expiry, never for a later one', async () => {
    const soon = new Date(Date.now() + 2 * 3600_000).toISOString();
    const later = new Date(Date.now() + 3 * 86400_000).toISOString();
    const near = (await create(manager.key, { name: 'Soon', kind: 'secret', expiresAt: soon })).body.data;
    const far = (await create(manager.key, { name: 'Later', kind: 'secret', expiresAt: later })).body.data;
    assert.ok((await sendExpiringNotices(t.runtime.db)) >= 1);
    await sendExpiringNotices(t.runtime.db);
    const told = await events(near.id);
    assert.deepEqual(
      told.map((event) => event.event),
      ['api_key.expiring'],
    );
    const data = JSON.parse(told[0]!.body).data;
    assert.equal(data.expiresAt, soon);
    assert.ok(!told[0]!.body.includes(near.key));
    assert.deepEqual(await events(far.id), []);
    // Two days on, the later key is told too.
    await sendExpiringNotices(t.runtime.db, { now: new Date(Date.now() + 2.5 * 86400_000) });
    assert.deepEqual(
      (await events(far.id)).map((event) => event.event),
      ['api_key.expiring'],
    );
  });

  test("the operator's key commands are audited with the operator as actor", async () => {
    const made = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      name: 'Ops',
    });
    expectStatus(made, 201);
    assert.equal(made.body.data.name, 'Ops');
    const rolled = await t.admin('POST', `/keys/${made.body.data.id}/roll`, { expiresIn: 60 });
    expectStatus(rolled, 201);
    expectStatus(await t.request('GET', BALANCE, { key: made.body.data.key }), 200);
    expectStatus(await t.admin('POST', `/keys/${made.body.data.id}/revoke`), 200);
    assert.deepEqual(
      (await audit(made.body.data.id)).map((entry) => [entry.action, entry.actor_kind]),
      [
        ['api_key.created', 'operator'],
        ['api_key.rolled', 'operator'],
        ['api_key.revoked', 'operator'],
      ],
    );
  });

  test('the CLI: key create --name, key roll --expires-in (the old key works during the overlap)', async () => {
    const created = await adminCli(
      t,
      'key',
      'create',
      '--business',
      business.id,
      '--kind',
      'secret',
      '--env',
      'test',
      '--name',
      'Cli till',
      '--scopes',
      'intents:read',
      '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const made = JSON.parse(created.stdout);
    assert.equal(made.name, 'Cli till');
    const rolled = await adminCli(t, 'key', 'roll', made.id, '--expires-in', '600', '--json');
    assert.equal(rolled.code, 0, rolled.stderr);
    const successor = JSON.parse(rolled.stdout);
    expectStatus(await t.request('GET', BALANCE, { key: made.key }), 200);
    expectStatus(await t.request('GET', BALANCE, { key: successor.key }), 200);
    const bad = await adminCli(t, 'key', 'roll', made.id, '--expires-in', 'soon', '--json');
    assert.equal(bad.code, 2);
    const again = await adminCli(t, 'key', 'roll', made.id, '--json');
    assert.equal(JSON.parse(again.stderr).error.code, 'API_KEY_NOT_ACTIVE');
  });
});
