import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { scopesMemberMayGive } from '../../src/modules/team/permissions.js';
import { FormClient, hiddenFields, PASSWORD, signedIn } from '../dashboard/support.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { auditOf, freshEmail, invitationLinkIn, TEAM, userByEmail } from './support.js';

const KEYS = '/dashboard/developers/keys';

/**
 * Issue 53's rules that close the gaps between the dashboard and the API: a member never gives a
 * key more than their role does (decision 083), a removed member may come back, and an inviter's
 * pending invitations end with their say.
 */
describe('team rules across the dashboard and the API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      config: { DASHBOARD_LOGIN_PER_MINUTE_IP: '1000', DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000' },
    });
  });
  afterAll(() => t?.close());

  test('the scopes a member may give: their role live, everything but the audit log in test mode', () => {
    const live = (role: Parameters<typeof scopesMemberMayGive>[0]) => scopesMemberMayGive(role, 'live');
    assert.ok(!live('developer').includes('intents:write'), 'a developer cannot refund through a live key');
    assert.ok(!live('developer').includes('balance:read'));
    assert.ok(live('developer').includes('webhooks:write'));
    assert.ok(!live('support').includes('payouts:write'), 'support cannot pay out through a live key');
    assert.ok(live('finance').includes('payouts:write'));
    assert.deepEqual(
      live('viewer').filter((scope) => scope.endsWith(':write')),
      [],
      'a viewer gives no write',
    );
    assert.ok(scopesMemberMayGive('developer', 'test').includes('intents:write'), 'test mode lifts the ceiling');
    assert.ok(!scopesMemberMayGive('developer', 'test').includes('audit:read'), 'but not for the audit log');
    assert.ok(live('admin').includes('audit:read'));
  });

  test('a developer is offered and given only the scopes their role may give; a forged one is refused', async () => {
    const business = await t.createBusiness();
    const developer = await signedIn(t, business.id, 'developer');
    const page = await developer.client.get(KEYS);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.html, /value="audit:read"/, 'not offered');
    const forged = await developer.client.submit(KEYS, KEYS, {
      name: 'Reader',
      kind: 'secret',
      scopes: ['intents:read', 'audit:read'],
    });
    assert.equal(forged.status, 303);
    assert.match(forged.location ?? '', /error=SCOPE_ESCALATION/);
    const made = await t.runtime.db
      .selectFrom('api_keys')
      .select('id')
      .where('business_id', '=', business.id)
      .where('name', '=', 'Reader')
      .execute();
    assert.equal(made.length, 0, 'nothing written');
  });

  test('a removed member is invited back and gets their account again; their own invitations ended with them', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const admin = await signedIn(t, business.id, 'admin');
    const invitedByAdmin = freshEmail('by-admin');
    const sent = await admin.client.submit(TEAM, `${TEAM}/invitations`, { email: invitedByAdmin, role: 'viewer' });
    assert.equal(sent.status, 200, sent.html.slice(0, 300));
    const adminsLink = invitationLinkIn(sent.html)!;

    const removed = await owner.client.submit(TEAM, `${TEAM}/members/${admin.user.id}/remove`);
    assert.equal(removed.location, `${TEAM}?notice=done`);
    const ended = await new FormClient(t).get(new URL(adminsLink).pathname);
    assert.equal(ended.status, 410, "the removed admin's invitation no longer opens");

    const back = await owner.client.submit(TEAM, `${TEAM}/invitations`, { email: admin.user.email, role: 'support' });
    assert.equal(back.status, 200, back.html.slice(0, 300));
    const link = invitationLinkIn(back.html)!;
    const path = new URL(link).pathname;
    const joiner = new FormClient(t);
    const form = await joiner.get(path);
    assert.equal(form.status, 200);
    const joined = await joiner.post(path, { ...hiddenFields(form.html, path), password: PASSWORD, again: PASSWORD });
    assert.equal(joined.status, 303, joined.html.slice(0, 300));
    const user = await userByEmail(t, admin.user.email);
    assert.equal(user?.id, admin.user.id, 'the same account');
    assert.equal(user?.role, 'support');
    assert.equal(user?.disabled_at, null);
    assert.equal((await joiner.get('/dashboard/payments')).status, 200);
    assert.equal((await joiner.get(TEAM)).status, 403, 'with the new role only');
    const joinedEntries = await auditOf(t, business.id, 'user.joined');
    assert.equal(joinedEntries.filter((entry) => entry.actor_kind === 'user').length, 1, 'the return is recorded');
  });
});
