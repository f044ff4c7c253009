import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { canonicalJson } from '../../src/http/idempotency/fingerprint.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { FormClient, hiddenFields, PASSWORD, signedIn } from './support.js';

const SETTINGS = '/dashboard/settings';

describe('dashboard settings: business name, users and roles, fee plan', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000',
      },
    });
  });
  afterAll(() => t?.close());

  const userByEmail = (email: string) =>
    t.runtime.db.selectFrom('dashboard_users').selectAll().where('email', '=', email).executeTakeFirst();

  test('an owner renames the business; an empty name is refused; the fee plan is shown read only', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const fees = await t.admin('PUT', `/businesses/${business.id}/fees`, { providerBps: 250, payerFee: 500 });
    assert.equal(fees.status, 200, fees.text);
    const { client } = await signedIn(t, business.id);
    const page = await client.get(SETTINGS);
    assert.equal(page.status, 200);
    const renamed = await client.submit(SETTINGS, `${SETTINGS}/business`, { name: '  Boutique Nouakchott  ' });
    assert.equal(renamed.location, `${SETTINGS}?notice=done`);
    const row = await t.runtime.db
      .selectFrom('businesses')
      .select('name')
      .where('id', '=', business.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.name, 'Boutique Nouakchott');
    const after = await client.get(SETTINGS);
    assert.match(after.html, /class="brand"><bdi>Boutique Nouakchott<\/bdi></);
    const form = { ...hiddenFields((await client.get(SETTINGS)).html, `${SETTINGS}/business`), name: 'Once' };
    assert.equal((await client.post(`${SETTINGS}/business`, form)).location, `${SETTINGS}?notice=done`);
    await t.runtime.db.updateTable('businesses').set({ name: 'Changed since' }).where('id', '=', business.id).execute();
    assert.equal((await client.post(`${SETTINGS}/business`, form)).location, `${SETTINGS}?notice=already`);
    const kept = await t.runtime.db
      .selectFrom('businesses')
      .select('name')
      .where('id', '=', business.id)
      .executeTakeFirstOrThrow();
    assert.equal(kept.name, 'Changed since', 'the repeat wrote nothing');
    const empty = await client.submit(SETTINGS, `${SETTINGS}/business`, { name: '   ' });
    assert.equal(empty.location, `${SETTINGS}?error=VALIDATION_ERROR`);
    // The plan the operator set: 2.50 % provider fee, 5.00 MRU paid by the payer.
    const plan = /<dl id="fee-plan">([\s\S]*?)<\/dl>/.exec(after.html)?.[1] ?? '';
    assert.match(plan, /<dd>2\.50%<\/dd>/);
    assert.match(plan, /<dd>5[.,]00\b[^<]*MRU|MRU[^<]*5[.,]00/);
    assert.doesNotMatch(after.html, /action="\/dashboard\/settings\/fee/, 'no form changes the fee plan');
  });

  test('an owner adds a user with a first password, who signs in at once with its role; a double submit adds one', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const { client } = await signedIn(t, business.id);
    const email = `invited-${Date.now()}@example.com`;
    const form = {
      ...hiddenFields((await client.get(SETTINGS)).html, `${SETTINGS}/users`),
      email,
      password: PASSWORD,
      role: 'viewer',
    };
    const answers = await Promise.all([client.post(`${SETTINGS}/users`, form), client.post(`${SETTINGS}/users`, form)]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [303, 303]);
    const rows = await t.runtime.db.selectFrom('dashboard_users').select('id').where('email', '=', email).execute();
    assert.equal(rows.length, 1);
    // The form's key covers its fields but the password: a password is never kept beside a key.
    const { _csrf: _token, password: _password, ...covered }: Record<string, string> = form;
    const stored = await t.runtime.db
      .selectFrom('idempotency_keys')
      .select('fingerprint')
      .where('business_id', '=', business.id)
      .where('idempotency_key', 'like', 'dashboard:%')
      .execute();
    const fingerprint = createHash('sha256')
      .update(`POST ${SETTINGS}/users\n${canonicalJson(covered)}`)
      .digest('hex');
    assert.deepEqual(
      stored.map((row) => row.fingerprint),
      [fingerprint],
    );
    const invited = new FormClient(t);
    assert.equal((await invited.signIn(email, PASSWORD)).status, 303);
    const page = await invited.get(SETTINGS);
    assert.equal(page.status, 200);
    assert.ok(!page.html.includes(`action="${SETTINGS}/users"`), 'a viewer gets no invite form');

    const short = await client.submit(SETTINGS, `${SETTINGS}/users`, {
      email: 'x@example.com',
      password: 'short',
      role: 'viewer',
    });
    assert.equal(short.status, 400, 'drawn again with the refusal beside the password');
    assert.match(short.html, /id="error-invite-password">Use from 12 to 200 characters\.</);
    assert.match(
      short.html,
      /id="invite-email" name="email" type="email" required autocomplete="off" value="x@example\.com"/,
    );
    const taken = await client.submit(SETTINGS, `${SETTINGS}/users`, { email, password: PASSWORD, role: 'owner' });
    assert.equal(taken.status, 400);
    assert.match(taken.html, /id="error-invite-email">Enter an email address that no other user has\.</);
    assert.match(taken.html, /<option value="owner" selected>/, 'the role is kept');
    assert.ok(!taken.html.includes(PASSWORD), 'the password is never drawn back');
    assert.equal((await userByEmail(email))?.role, 'viewer');
  });

  test('an owner changes a role and disables a user (signed out at once); the last owner stays', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const other = await signedIn(t, business.id, 'viewer');
    const path = `${SETTINGS}/users/${other.user.id}`;
    const promoted = await owner.client.submit(SETTINGS, `${path}/role`, { role: 'owner' });
    assert.equal(promoted.location, `${SETTINGS}?notice=done`);
    assert.equal((await userByEmail(other.user.email))?.role, 'owner');
    assert.match(
      (await other.client.get(SETTINGS)).html,
      new RegExp(`action="${SETTINGS}/users"`),
      'the new role applies at once',
    );

    const disabled = await owner.client.submit(SETTINGS, `${path}/disable`);
    assert.equal(disabled.location, `${SETTINGS}?notice=done`);
    assert.ok((await userByEmail(other.user.email))?.disabled_at);
    const signedOut = await other.client.get(SETTINGS);
    assert.equal(signedOut.status, 303);
    assert.match(signedOut.location ?? '', /^\/dashboard\/login/);

    const self = `${SETTINGS}/users/${owner.user.id}`;
    const demote = await owner.client.submit(SETTINGS, `${self}/role`, { role: 'viewer' });
    assert.equal(demote.location, `${SETTINGS}?error=LAST_OWNER`);
    assert.match((await owner.client.get(demote.location!)).html, /at least one active owner/);
    const disableSelf = await owner.client.submit(SETTINGS, `${self}/disable`);
    assert.equal(disableSelf.location, `${SETTINGS}?error=LAST_OWNER`);
    assert.equal((await userByEmail(owner.user.email))?.role, 'owner');
    assert.equal((await userByEmail(owner.user.email))?.disabled_at, null);

    const stranger = await t.createBusiness({ approveLive: false });
    const strangerUser = await signedIn(t, stranger.id);
    const foreign = await owner.client.post(`${SETTINGS}/users/${strangerUser.user.id}/disable`, {
      ...hiddenFields((await owner.client.get(SETTINGS)).html, `${self}/disable`),
    });
    assert.equal(foreign.location, `${SETTINGS}?error=NOT_FOUND`);
    assert.equal((await userByEmail(strangerUser.user.email))?.disabled_at, null);
  });

  test('two owners demoting each other at once leave one owner', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const a = await signedIn(t, business.id);
    const b = await signedIn(t, business.id);
    const [formA, formB] = await Promise.all([
      a.client.get(SETTINGS).then((p) => hiddenFields(p.html, `${SETTINGS}/users/${b.user.id}/role`)),
      b.client.get(SETTINGS).then((p) => hiddenFields(p.html, `${SETTINGS}/users/${a.user.id}/role`)),
    ]);
    const answers = await Promise.all([
      a.client.post(`${SETTINGS}/users/${b.user.id}/role`, { ...formA, role: 'viewer' }),
      b.client.post(`${SETTINGS}/users/${a.user.id}/role`, { ...formB, role: 'viewer' }),
    ]);
    // The second is refused either way: as the last owner's demotion, or (if the first committed
    // before it was read) because its sender is no longer an owner.
    const outcomes = answers.map((answer) => answer.location?.split('?')[1] ?? String(answer.status)).sort();
    assert.equal(outcomes.filter((outcome) => outcome === 'notice=done').length, 1, outcomes.join());
    assert.ok(['403', 'error=LAST_OWNER'].includes(outcomes.find((o) => o !== 'notice=done')!), outcomes.join());
    const owners = await t.runtime.db
      .selectFrom('dashboard_users')
      .select('id')
      .where('business_id', '=', business.id)
      .where('role', '=', 'owner')
      .execute();
    assert.equal(owners.length, 1);
  });

  test('a viewer and a forged form change nothing', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const viewer = await signedIn(t, business.id, 'viewer');
    const page = await viewer.client.get(SETTINGS);
    assert.equal(page.status, 200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
    for (const [action, form] of [
      [`${SETTINGS}/business`, { name: 'Hijacked' }],
      [`${SETTINGS}/users`, { email: 'evil@example.com', password: PASSWORD, role: 'owner' }],
      [`${SETTINGS}/users/${viewer.user.id}/role`, { role: 'owner' }],
      [`${SETTINGS}/users/${owner.user.id}/disable`, {}],
    ] as const) {
      const answer = await viewer.client.post(action, { _csrf: csrf, _idem: 'abcdefghijklmnop1234', ...form });
      assert.equal(answer.status, 403, action);
    }
    const { _csrf: _token, ...noCsrf } = hiddenFields((await owner.client.get(SETTINGS)).html, `${SETTINGS}/business`);
    const forged = await owner.client.post(`${SETTINGS}/business`, { ...noCsrf, name: 'Forged' });
    assert.equal(forged.status, 403);
    const row = await t.runtime.db
      .selectFrom('businesses')
      .select('name')
      .where('id', '=', business.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.name, 'Test business');
    assert.equal(await userByEmail('evil@example.com'), undefined);
    assert.equal((await userByEmail(viewer.user.email))?.role, 'viewer');
  });
});
