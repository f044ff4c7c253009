import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { FormClient, hiddenFields, PASSWORD, signedIn } from '../dashboard/support.js';
import { auditOf, freshEmail, invitationLinkIn, TEAM, userByEmail } from './support.js';

/** Opens an invitation's link in a fresh browser and joins with `password`. */
async function join(t: TestApp, link: string, password = PASSWORD, again = password) {
  const path = new URL(link).pathname;
  const client = new FormClient(t);
  const page = await client.get(path);
  assert.equal(page.status, 200, page.html.slice(0, 300));
  const answer = await client.post(path, { ...hiddenFields(page.html, path), password, again });
  return { client, page, answer, path };
}

describe('the Team page: invitations, roles, removal, the rules and their audit entries', () => {
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

  const invite = async (client: FormClient, email: string, role: string) =>
    client.submit(TEAM, `${TEAM}/invitations`, { email, role });

  test('an owner invites by email and role; the link is shown once; the invitee sets a password and is signed in with the role', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const email = freshEmail('support');
    const created = await invite(owner.client, email, 'support');
    assert.equal(created.status, 200, created.html.slice(0, 500));
    const link = invitationLinkIn(created.html);
    assert.ok(link, 'the link is drawn in the answer');
    assert.match(link, /\/dashboard\/invitations\/[A-Za-z0-9_-]{43}$/);
    assert.match(created.html, /id="invitation-link-copy" data-copy="invitation-link"/, 'with a Copy button');
    const token = link.split('/').pop()!;
    const stored = await t.runtime.db
      .selectFrom('dashboard_invitations')
      .selectAll()
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    assert.notEqual(stored.token_hash, token, 'only the hash is kept');
    assert.equal(stored.role, 'support');
    const hours = (stored.expires_at.getTime() - stored.created_at.getTime()) / 3_600_000;
    assert.equal(Math.round(hours), 72);
    const page = await owner.client.get(TEAM);
    assert.equal(invitationLinkIn(page.html), undefined, 'never shown again');
    assert.match(page.html, new RegExp(`<tr data-email="${email}">`), 'listed as pending');

    const joined = await join(t, link);
    assert.match(joined.page.html, /Join Test business/);
    assert.equal(joined.answer.status, 303);
    assert.equal(joined.answer.location, '/dashboard');
    const member = await userByEmail(t, email);
    assert.equal(member?.role, 'support');
    assert.equal(member?.business_id, business.id);
    assert.equal((await joined.client.get('/dashboard/payments')).status, 200, 'signed in');
    assert.equal((await joined.client.get('/dashboard/balance')).status, 403, 'with the role');

    // Replayed: the message, nothing written.
    const again = new FormClient(t);
    const used = await again.get(joined.path);
    assert.equal(used.status, 410);
    assert.match(used.html, /already used/);
    const replay = await again.post(joined.path, { password: PASSWORD, again: PASSWORD });
    assert.equal(replay.status, 403, 'without the form token');

    const invited = await auditOf(t, business.id, 'user.invited');
    assert.equal(invited.length, 1);
    assert.equal(invited[0]!.actor_id, owner.user.id);
    assert.deepEqual(invited[0]!.details, { email, role: 'support' });
    assert.ok(!JSON.stringify(invited).includes(token), 'the token is never in the log');
    // The test's own members are made by the operator (`admin user create`): the invitee joined alone.
    const joinedEntries = (await auditOf(t, business.id, 'user.joined')).filter((entry) => entry.actor_kind === 'user');
    assert.equal(joinedEntries.length, 1);
    assert.equal(joinedEntries[0]!.actor_id, member!.id);
  });

  test('an invitation for a member, or for an email already invited, is refused on the field; nothing written', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const member = await signedIn(t, business.id, 'viewer');
    const taken = await invite(owner.client, member.user.email, 'finance');
    assert.equal(taken.status, 400);
    assert.match(taken.html, /id="error-email">Enter an email address that is not a member/);
    assert.match(taken.html, /<option value="finance" selected>/, 'the role is kept');
    const email = freshEmail('twice');
    assert.equal((await invite(owner.client, email, 'viewer')).status, 200);
    const twice = await invite(owner.client, email, 'admin');
    assert.equal(twice.status, 400);
    assert.match(twice.html, /id="error-email"/);
    const notEmail = await invite(owner.client, 'not an email', 'viewer');
    assert.equal(notEmail.status, 400);
    const rows = await t.runtime.db
      .selectFrom('dashboard_invitations')
      .select('email')
      .where('business_id', '=', business.id)
      .execute();
    assert.deepEqual(
      rows.map((row) => row.email),
      [email],
    );
    assert.equal((await auditOf(t, business.id, 'user.invited')).length, 1);
  });

  test('forged, revoked and expired links draw their message and write nothing; a bad password is refused at its field', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const forged = await new FormClient(t).get(`/dashboard/invitations/${'A'.repeat(43)}`);
    assert.equal(forged.status, 404);
    assert.match(forged.html, /not valid/);
    assert.equal((await new FormClient(t).get('/dashboard/invitations/short')).status, 404);

    const revokedEmail = freshEmail('revoked');
    const revokedLink = invitationLinkIn((await invite(owner.client, revokedEmail, 'viewer')).html)!;
    const id = (
      await t.runtime.db
        .selectFrom('dashboard_invitations')
        .select('id')
        .where('email', '=', revokedEmail)
        .executeTakeFirstOrThrow()
    ).id;
    const revoked = await owner.client.submit(TEAM, `${TEAM}/invitations/${id}/revoke`);
    assert.equal(revoked.location, `${TEAM}?notice=done`);
    const revokedPage = await new FormClient(t).get(new URL(revokedLink).pathname);
    assert.equal(revokedPage.status, 410);
    assert.match(revokedPage.html, /withdrawn/);
    assert.equal((await auditOf(t, business.id, 'user.invitation_revoked')).length, 1);

    const expiredEmail = freshEmail('expired');
    const expiredLink = invitationLinkIn((await invite(owner.client, expiredEmail, 'viewer')).html)!;
    const client = new FormClient(t);
    const path = new URL(expiredLink).pathname;
    const form = hiddenFields((await client.get(path)).html, path);
    await t.runtime.db
      .updateTable('dashboard_invitations')
      .set({ expires_at: sql<Date>`now() - interval '1 minute'` })
      .where('email', '=', expiredEmail)
      .execute();
    const expired = await client.post(path, { ...form, password: PASSWORD, again: PASSWORD });
    assert.equal(expired.status, 410);
    assert.match(expired.html, /expired/);
    assert.equal(await userByEmail(t, expiredEmail), undefined);

    const shortEmail = freshEmail('short');
    const shortLink = invitationLinkIn((await invite(owner.client, shortEmail, 'viewer')).html)!;
    const short = await join(t, shortLink, 'short');
    assert.equal(short.answer.status, 400);
    assert.match(short.answer.html, /id="error-password">Use from 12 to 200 characters\./);
    const differ = await join(t, shortLink, PASSWORD, `${PASSWORD}!`);
    assert.equal(differ.answer.status, 400);
    assert.match(differ.answer.html, /id="error-again"/);
    assert.equal(await userByEmail(t, shortEmail), undefined);
    const joined = await auditOf(t, business.id, 'user.joined');
    assert.equal(joined.filter((entry) => entry.actor_kind === 'user').length, 0);
  });

  test('an owner changes a role and removes a member: the member is signed out at once; both are recorded', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const other = await signedIn(t, business.id, 'viewer');
    const path = `${TEAM}/members/${other.user.id}`;
    const changed = await owner.client.submit(TEAM, `${path}/role`, { role: 'finance' });
    assert.equal(changed.location, `${TEAM}?notice=done`);
    assert.equal((await userByEmail(t, other.user.email))?.role, 'finance');
    assert.equal((await other.client.get('/dashboard/payouts/new')).status, 200, 'the new role applies at once');
    const removed = await owner.client.submit(TEAM, `${path}/remove`);
    assert.equal(removed.location, `${TEAM}?notice=done`);
    assert.ok((await userByEmail(t, other.user.email))?.disabled_at);
    const sessions = await t.runtime.db
      .selectFrom('dashboard_sessions')
      .select('revoked_at')
      .where('user_id', '=', other.user.id)
      .execute();
    assert.ok(sessions.every((session) => session.revoked_at !== null));
    const signedOut = await other.client.get('/dashboard');
    assert.equal(signedOut.status, 303);
    assert.match(signedOut.location ?? '', /^\/dashboard\/login/);
    assert.doesNotMatch((await owner.client.get(TEAM)).html, new RegExp(other.user.email), 'no longer listed');
    const [roleChanged] = await auditOf(t, business.id, 'user.role_changed');
    assert.deepEqual(roleChanged?.details, { email: other.user.email, from: 'viewer', to: 'finance' });
    assert.equal(roleChanged?.target_id, other.user.id);
    const [removal] = await auditOf(t, business.id, 'user.removed');
    assert.equal(removal?.actor_id, owner.user.id);
  });

  test('the last owner cannot be demoted or removed; an admin cannot make, change or remove an owner', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const admin = await signedIn(t, business.id, 'admin');
    const csrf = (page: string) => hiddenFields(page, `${TEAM}/invitations`);
    const ownerForm = csrf((await owner.client.get(TEAM)).html);
    const self = `${TEAM}/members/${owner.user.id}`;
    const demote = await owner.client.post(`${self}/role`, { ...ownerForm, role: 'viewer' });
    assert.equal(demote.location, `${TEAM}?error=LAST_OWNER`);
    assert.match((await owner.client.get(demote.location!)).html, /at least one active owner/);
    const remove = await owner.client.post(`${self}/remove`, { ...csrf((await owner.client.get(TEAM)).html) });
    assert.equal(remove.location, `${TEAM}?error=LAST_OWNER`);
    assert.equal((await userByEmail(t, owner.user.email))?.role, 'owner');
    assert.equal((await userByEmail(t, owner.user.email))?.disabled_at, null);

    const adminPage = await admin.client.get(TEAM);
    assert.equal(adminPage.status, 200);
    assert.doesNotMatch(adminPage.html, /<option value="owner"/, 'an admin is offered no owner role');
    assert.doesNotMatch(adminPage.html, new RegExp(`action="${self}/`), 'nor a form on an owner');
    for (const [action, form] of [
      [`${self}/role`, { role: 'viewer' }],
      [`${self}/remove`, {}],
      [`${TEAM}/invitations`, { email: freshEmail('boss'), role: 'owner' }],
    ] as const) {
      const answer = await admin.client.post(action, { ...csrf((await admin.client.get(TEAM)).html), ...form });
      assert.equal(answer.location, `${TEAM}?error=OWNERS_ONLY`, action);
    }
    const viewer = await signedIn(t, business.id, 'viewer');
    const promote = await admin.client.submit(TEAM, `${TEAM}/members/${viewer.user.id}/role`, { role: 'owner' });
    assert.equal(promote.location, `${TEAM}?error=OWNERS_ONLY`);
    assert.match((await admin.client.get(promote.location!)).html, /Only an owner makes, changes or removes an owner/);
    const made = await admin.client.submit(TEAM, `${TEAM}/members/${viewer.user.id}/role`, { role: 'developer' });
    assert.equal(made.location, `${TEAM}?notice=done`, 'an admin manages the other roles');
    assert.equal((await userByEmail(t, viewer.user.email))?.role, 'developer');
    assert.equal((await auditOf(t, business.id, 'user.role_changed')).length, 1);

    const stranger = await signedIn(t, (await t.createBusiness({ approveLive: false })).id);
    const foreign = await owner.client.post(`${TEAM}/members/${stranger.user.id}/remove`, {
      ...csrf((await owner.client.get(TEAM)).html),
    });
    assert.equal(foreign.location, `${TEAM}?error=NOT_FOUND`);
    assert.equal((await userByEmail(t, stranger.user.email))?.disabled_at, null);
  });

  test('a role without team.manage opens no Team page and posts no team form', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    for (const role of ['developer', 'finance', 'support', 'viewer'] as const) {
      const member = await signedIn(t, business.id, role);
      const page = await member.client.get(TEAM);
      assert.equal(page.status, 403, role);
      assert.doesNotMatch((await member.client.get('/dashboard/settings')).html, /href="\/dashboard\/team"/, role);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
      const answer = await member.client.post(`${TEAM}/members/${owner.user.id}/remove`, {
        _csrf: csrf,
        _idem: 'abcdefghijklmnop1234',
      });
      assert.equal(answer.status, 403, role);
    }
    assert.match((await owner.client.get('/dashboard')).html, /href="\/dashboard\/team"/);
    assert.equal((await userByEmail(t, owner.user.email))?.disabled_at, null);
  });

  test('sign-in, a failed sign-in and a password change are recorded; the operator is recorded for its user commands', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const { client, user } = await signedIn(t, business.id, 'viewer');
    const failed = await new FormClient(t).signIn(user.email, 'wrong password!!');
    assert.equal(failed.status, 401);
    const changed = await client.submit('/dashboard/settings', '/dashboard/settings/password', {
      current: PASSWORD,
      password: `${PASSWORD} 2`,
      again: `${PASSWORD} 2`,
    });
    assert.equal(changed.status, 303);
    const entries = await auditOf(t, business.id);
    const actions = entries.map((entry) => entry.action);
    assert.ok(actions.includes('user.signed_in'));
    const failure = entries.find((entry) => entry.action === 'user.sign_in_failed');
    assert.equal(failure?.actor_label, user.email);
    assert.equal(failure?.actor_id, null, 'no session proves who typed it');
    assert.ok(!JSON.stringify(entries).includes('wrong password'), 'never the password');
    const changedEntry = entries.find((entry) => entry.action === 'user.password_changed');
    assert.equal(changedEntry?.actor_id, user.id);

    const created = await t.admin('POST', '/users', {
      businessId: business.id,
      email: freshEmail('operator'),
      password: PASSWORD,
      role: 'finance',
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id as string;
    assert.equal((await t.admin('POST', `/users/${id}/reset-password`, { password: `${PASSWORD}!` })).status, 200);
    assert.equal((await t.admin('POST', `/users/${id}/disable`)).status, 200);
    const operatorActs = (await auditOf(t, business.id)).filter((entry) => entry.target_id === id);
    assert.deepEqual(
      operatorActs.map((entry) => entry.action),
      ['user.joined', 'user.password_changed', 'user.removed'],
    );
    assert.ok(operatorActs.every((entry) => entry.actor_kind === 'operator'));
  });
});
