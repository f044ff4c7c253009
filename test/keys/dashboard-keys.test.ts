import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { hashKey } from '../../src/modules/keys/key-text.js';
import { hiddenFields, FormClient, PASSWORD } from '../dashboard/support.js';
import { expectStatus, startTestApp, waitUntil, type TestApp, type TestBusiness } from '../support/harness.js';

const KEYS = '/dashboard/developers/keys';
const INTENTS = '/api/v1/dev/intents';

let counter = 0;

/** A member of the business with `role`, signed in. */
async function member(t: TestApp, businessId: string, role: string): Promise<FormClient> {
  const email = `keys-${role}-${++counter}-${process.pid}@example.com`;
  expectStatus(await t.admin('POST', '/users', { businessId, email, password: PASSWORD, role }), 201);
  const client = new FormClient(t);
  assert.equal((await client.signIn(email, PASSWORD)).status, 303);
  return client;
}

const secretOf = (html: string) => /id="new-key">([^<]+)</.exec(html)?.[1] ?? '';

/** The Developers page's keys (issue 53 item 3): name, scopes, roll with an overlap, revoke, last used, Copy. */
describe('dashboard API keys', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ config: { DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness();
  });
  afterAll(() => t?.close());

  const keyId = async (secret: string) =>
    (
      await t.runtime.db
        .selectFrom('api_keys')
        .select('id')
        .where('key_hash', '=', hashKey(secret))
        .executeTakeFirstOrThrow()
    ).id;

  test('a developer creates a named key with chosen scopes, shown once with a Copy button; audited as the user', async () => {
    const client = await member(t, business.id, 'developer');
    const page = await client.get(KEYS);
    assert.equal(page.status, 200);
    assert.match(page.html, /name="overlap"/, 'the roll form offers an overlap');
    assert.doesNotMatch(page.html, /value="api_keys:write" checked/, 'api_keys:write is never ticked by default');
    const created = await client.submit(KEYS, KEYS, { name: 'Till 1', kind: 'secret', scopes: ['intents:read'] });
    assert.equal(created.status, 200);
    const secret = secretOf(created.html);
    assert.match(secret, /^sk_test_/);
    assert.match(created.html, /id="new-key-copy" data-copy="new-key"/);
    // Copy's script is loaded once, by the layout in <head>, however many Copy buttons the page has.
    assert.equal(created.html.match(/\/dashboard\/assets\/copy\.js/g)?.length, 1);
    assert.match(
      created.html,
      /<script src="\/dashboard\/assets\/copy\.js[^"]*" nonce="[^"]+" defer><\/script>\n<\/head>/,
    );
    expectStatus(await t.request('GET', INTENTS, { key: secret }), 200);

    const id = await keyId(secret);
    const listed = await waitUntil(async () => {
      const html = (await client.get(KEYS)).html;
      return html.includes('127.0.0.1') ? html : undefined;
    }, 'the last use shown with its address');
    assert.ok(!listed.includes(secret), 'the list never shows a secret');
    assert.match(listed, /Till 1/);

    const entries = await t.runtime.db
      .selectFrom('audit_log')
      .select(['action', 'actor_kind', 'actor_label'])
      .where('target_id', '=', id)
      .execute();
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.action, 'api_key.created');
    assert.equal(entries[0]!.actor_kind, 'user');
    assert.match(entries[0]!.actor_label!, /^keys-developer-/);

    const web = await client.submit(KEYS, KEYS, {
      name: 'Web',
      kind: 'publishable',
      scopes: ['intents:read', 'intents:write', 'store.products:read'],
    });
    assert.equal(web.status, 200);
    const webScopes = await t.runtime.db
      .selectFrom('api_keys')
      .select('scopes')
      .where('key_hash', '=', hashKey(secretOf(web.html)))
      .executeTakeFirstOrThrow();
    assert.deepEqual(webScopes.scopes, ['intents:read', 'store.products:read'], 'a publishable key only reads');

    const blank = await client.submit(KEYS, KEYS, { name: '  ', kind: 'secret', scopes: ['intents:read'] });
    assert.equal(blank.location, `${KEYS}?error=VALIDATION_ERROR`);
  });

  test('roll with a 1 hour overlap: both keys work, the old one is listed until then; revoke stops it at once', async () => {
    const client = await member(t, business.id, 'owner');
    const secret = secretOf(
      (await client.submit(KEYS, KEYS, { name: 'Till 2', kind: 'secret', scopes: ['intents:read'] })).html,
    );
    const id = await keyId(secret);
    const rolled = await client.submit(KEYS, `${KEYS}/${id}/roll`, { overlap: '3600' });
    assert.equal(rolled.status, 200);
    const successor = secretOf(rolled.html);
    assert.ok(successor && successor !== secret);
    assert.match(rolled.html, /id="old-key"/);
    expectStatus(await t.request('GET', INTENTS, { key: secret }), 200);
    expectStatus(await t.request('GET', INTENTS, { key: successor }), 200);
    const row = await t.runtime.db
      .selectFrom('api_keys')
      .select(['status', 'expires_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'rotated');
    const overlap = row.expires_at!.getTime() - Date.now();
    assert.ok(overlap > 3500_000 && overlap <= 3600_000, `${overlap} ms`);
    assert.match((await client.get(KEYS)).html, new RegExp(`data-key="${id}"`));

    const form = hiddenFields((await client.get(KEYS)).html, `${KEYS}/${id}/revoke`);
    assert.equal((await client.post(`${KEYS}/${id}/revoke`, form)).status, 303);
    assert.equal((await t.request('GET', INTENTS, { key: secret })).status, 403);
    expectStatus(await t.request('GET', INTENTS, { key: successor }), 200);
    const events = await t.runtime.db
      .selectFrom('events')
      .select('event')
      .where('subject', '=', id)
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      events.map((event) => event.event),
      ['api_key.rolled', 'api_key.revoked'],
    );
  });

  test('a member without developers.manage is refused the keys page and a forged form', async () => {
    const owner = await member(t, business.id, 'owner');
    const secret = secretOf(
      (await owner.submit(KEYS, KEYS, { name: 'Till 3', kind: 'secret', scopes: ['intents:read'] })).html,
    );
    const id = await keyId(secret);
    const form = hiddenFields((await owner.get(KEYS)).html, `${KEYS}/${id}/revoke`);

    for (const role of ['viewer', 'finance', 'support']) {
      const client = await member(t, business.id, role);
      assert.equal((await client.get(KEYS)).status, 403, `${role}: the keys are not theirs to see`);
      const csrf = /name="_csrf" value="([^"]+)"/.exec((await client.get('/dashboard')).html)?.[1] ?? '';
      const refused = await client.post(`${KEYS}/${id}/revoke`, { ...form, _csrf: csrf });
      assert.equal(refused.status, 403, `${role} cannot revoke`);
      const made = await client.post(KEYS, { ...form, _csrf: csrf, name: 'x', kind: 'secret', scopes: 'intents:read' });
      assert.equal(made.status, 403, `${role} cannot create`);
    }
    expectStatus(await t.request('GET', INTENTS, { key: secret }), 200);
  });

  test('the page speaks Arabic and French', async () => {
    const client = await member(t, business.id, 'owner');
    await client.submit('/dashboard', '/dashboard/preferences', { lang: 'ar' });
    const arabic = (await client.get(KEYS)).html;
    assert.match(arabic, /يبقى المفتاح القديم صالحًا/);
    await client.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' });
    const french = (await client.get(KEYS)).html;
    assert.match(french, /L&#39;ancienne clé fonctionne encore|L'ancienne clé fonctionne encore/);
  });
});
