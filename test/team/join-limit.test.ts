import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { FormClient, hiddenFields, PASSWORD, signedIn } from '../dashboard/support.js';
import { freshEmail, invitationLinkIn, TEAM, userByEmail } from './support.js';

describe("an invitation's password spends sign-in's budget", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '2',
      },
    });
  });
  afterAll(() => t?.close());

  test('past the per-email limit the form answers 429 at its field, and no member is made', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const email = freshEmail('limited');
    const link = invitationLinkIn(
      (await owner.client.submit(TEAM, `${TEAM}/invitations`, { email, role: 'viewer' })).html,
    )!;
    const path = new URL(link).pathname;
    const client = new FormClient(t);
    const form = hiddenFields((await client.get(path)).html, path);
    for (let attempt = 0; attempt < 2; attempt++) {
      assert.equal((await client.post(path, { ...form, password: 'short', again: 'short' })).status, 400);
    }
    const limited = await client.post(path, { ...form, password: PASSWORD, again: PASSWORD });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '60');
    assert.match(limited.html, /id="error-password">Too many tries\./);
    assert.equal(await userByEmail(t, email), undefined);
  });
});
