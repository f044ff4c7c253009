import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { manualClock, type ManualClock } from '../support/clock.js';
import { sharedDatabase, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createUser, FormClient, hiddenFields } from './support.js';

const SETTINGS = '/dashboard/settings';
const PASSWORD_FORM = `${SETTINGS}/password`;
const NEW_PASSWORD = 'a brand new passphrase';

/**
 * Issue 47 item 4: the password-change form guesses at the current password within sign-in's
 * limits, on the same counters (decision 072): per account and per address, each attempt counted.
 */
describe('the password-change form spends sign-in’s budget of guesses', () => {
  let t: TestApp;
  let clock: ManualClock;
  let business: TestBusiness;
  beforeAll(async () => {
    clock = manualClock();
    t = await startTestApp({
      config: { DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '5', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' },
      clock,
    });
    business = await t.createBusiness();
  });
  afterAll(() => t?.close());

  const change = async (client: FormClient, current: string) => {
    const page = await client.get(SETTINGS);
    assert.equal(page.status, 200, page.html.slice(0, 300));
    return client.post(PASSWORD_FORM, {
      ...hiddenFields(page.html, PASSWORD_FORM),
      current,
      password: NEW_PASSWORD,
      again: NEW_PASSWORD,
    });
  };

  test('after sign-in and four wrong guesses the form answers 429, even to the right password, and so does sign-in', async () => {
    const user = await createUser(t, business.id);
    const client = new FormClient(t);
    assert.equal((await client.signIn(user.email, user.password)).status, 303, 'attempt 1: sign-in');
    for (let attempt = 2; attempt <= 5; attempt++) {
      const wrong = await change(client, `wrong guess ${attempt}`);
      assert.equal(wrong.status, 400, `attempt ${attempt}`);
      assert.match(wrong.html, /This is not your current password\./);
    }
    const limited = await change(client, user.password);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '60');
    assert.match(limited.html, /Too many tries at the current password\. Wait a minute and try again\./);
    assert.match(limited.html, /id="current-password" name="current"[^>]*aria-invalid="true"/);
    // The same counter: sign-in for this account is held back too, from any browser.
    const signIn = await new FormClient(t).signIn(user.email, user.password);
    assert.equal(signIn.status, 429);
    // Nothing changed: the old password still works once the minute has passed.
    clock.advance(60_000);
    assert.equal((await new FormClient(t).signIn(user.email, user.password)).status, 303);
    const changed = await change(client, user.password);
    assert.equal(changed.status, 303, changed.html.slice(0, 300));
    assert.equal((await new FormClient(t).signIn(user.email, NEW_PASSWORD)).status, 303);
  });

  test('30 wrong guesses in a row: sign-in and the first 4 spend the 5 a minute, the other 26 are 429; another user is not held back', async () => {
    clock.advance(60_000);
    const user = await createUser(t, business.id);
    const client = new FormClient(t);
    assert.equal((await client.signIn(user.email, user.password)).status, 303);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await change(client, `guess number ${i}`)).status);
    assert.deepEqual(statuses, [...Array(4).fill(400), ...Array(26).fill(429)]);
    const other = await createUser(t, business.id);
    const otherClient = new FormClient(t);
    assert.equal((await otherClient.signIn(other.email, other.password)).status, 303);
    assert.equal((await change(otherClient, other.password)).status, 303);
  });

  test('per address as for sign-in: one address guessing for many accounts is cut off', async () => {
    const strict = await startTestApp({
      testDatabase: sharedDatabase(t.testDatabase),
      config: { DASHBOARD_LOGIN_PER_MINUTE_IP: '3', DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '100' },
      clock: manualClock(),
    });
    try {
      const user = await createUser(strict, business.id);
      const client = new FormClient(strict);
      assert.equal((await client.signIn(user.email, user.password)).status, 303);
      const page = await client.get(SETTINGS);
      const post = (current: string) =>
        client.post(PASSWORD_FORM, {
          ...hiddenFields(page.html, PASSWORD_FORM),
          current,
          password: NEW_PASSWORD,
          again: NEW_PASSWORD,
        });
      assert.equal((await post('wrong guess one')).status, 400);
      assert.equal((await post('wrong guess two')).status, 400);
      assert.equal((await post(user.password)).status, 429);
    } finally {
      await strict.close();
    }
  });
});
