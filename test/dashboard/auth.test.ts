import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import { manualClock } from '../support/clock.js';
import { hashKey } from '../../src/modules/keys/key-text.js';
import { act, createIntent } from '../intents/support.js';
import { loadConfig } from '../../src/config.js';
import { hashPassword, verifyPassword } from '../../src/modules/dashboard/password.js';
import {
  sharedDatabase,
  startTestApp,
  TEST_PASSWORD_COST,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { createUser, field, FormClient, hiddenFields, PASSWORD, signedIn } from './support.js';

const GENERIC = 'Wrong email or password.';

const cli = (t: TestApp, args: string[]) => adminCli(t, ...args);

async function paidIntent(t: TestApp, business: TestBusiness, amount = 10_000) {
  const intent = await createIntent(t, business.keys.secretTest, { amount, label: 'Dashboard test' });
  const paid = await act(t, business.keys.secretTest, intent.referenceNumber, 'simulate', {});
  assert.equal(paid.status, 200, paid.text);
  return intent.referenceNumber as string;
}

async function refundsOf(t: TestApp, reference: string): Promise<number> {
  const row = await t.runtime.db
    .selectFrom('refunds')
    .innerJoin('payment_intents', 'payment_intents.id', 'refunds.intent_id')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('payment_intents.reference_number', '=', reference)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('dashboard accounts, sessions, CSRF, roles and limits', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ approveLive: false });
  });
  afterAll(() => t?.close());

  test('the admin CLI creates, lists, disables and resets users; bad input is refused', async () => {
    const email = `Owner-${Date.now()}@Example.com`;
    const created = await cli(t, [
      'user',
      'create',
      '--business',
      business.id,
      '--email',
      email,
      '--password',
      PASSWORD,
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const user = JSON.parse(created.stdout);
    assert.equal(user.email, email.toLowerCase());
    assert.equal(user.role, 'owner');
    assert.equal(user.disabled, false);
    assert.ok(!created.stdout.includes(PASSWORD));
    const stored = await t.runtime.db
      .selectFrom('dashboard_users')
      .select('password_hash')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    // Test apps hash at N = 2^TEST_PASSWORD_COST; the production cost is checked below.
    assert.match(stored.password_hash, /^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.equal(t.runtime.config.dashboard.passwordCost, TEST_PASSWORD_COST);
    assert.equal(loadConfig({}).dashboard.passwordCost, 15, "production hashes at OWASP's scrypt floor");
    const production = await hashPassword(PASSWORD);
    assert.match(production, /^scrypt\$32768\$8\$1\$/);
    assert.equal(await verifyPassword(PASSWORD, production), true);
    assert.equal(await verifyPassword(`${PASSWORD}x`, production), false);

    const again = await cli(t, [
      'user',
      'create',
      '--business',
      business.id,
      '--email',
      email.toUpperCase(),
      '--password',
      PASSWORD,
      '--json',
    ]);
    assert.equal(again.code, 1);
    assert.equal(JSON.parse(again.stderr).error.code, 'VALIDATION_ERROR');
    const short = await cli(t, [
      'user',
      'create',
      '--business',
      business.id,
      '--email',
      'x@example.com',
      '--password',
      'short',
      '--json',
    ]);
    assert.equal(short.code, 1);
    assert.match(JSON.parse(short.stderr).error.message, /at least 12 characters/);
    const badRole = await cli(t, [
      'user',
      'create',
      '--business',
      business.id,
      '--email',
      'y@example.com',
      '--password',
      PASSWORD,
      '--role',
      'boss',
      '--json',
    ]);
    assert.equal(JSON.parse(badRole.stderr).error.code, 'VALIDATION_ERROR');
    const noBusiness = await cli(t, [
      'user',
      'create',
      '--business',
      'biz_nope',
      '--email',
      'z@example.com',
      '--password',
      PASSWORD,
      '--json',
    ]);
    assert.equal(JSON.parse(noBusiness.stderr).error.code, 'NOT_FOUND');
    const viewer = await cli(t, [
      'user',
      'create',
      '--business',
      business.id,
      '--email',
      `v-${Date.now()}@example.com`,
      '--password',
      PASSWORD,
      '--role',
      'viewer',
      '--json',
    ]);
    assert.equal(JSON.parse(viewer.stdout).role, 'viewer');

    const listed = await cli(t, ['user', 'list', '--business', business.id, '--json']);
    assert.ok(JSON.parse(listed.stdout).items.some((item: { id: string }) => item.id === user.id));
    const unknown = await cli(t, ['user', 'disable', 'usr_nope', '--json']);
    assert.equal(JSON.parse(unknown.stderr).error.code, 'NOT_FOUND');
  });

  test('sign-in page: a form with a CSRF token bound to an HttpOnly SameSite=Lax cookie', async () => {
    const client = new FormClient(t);
    const page = await client.get('/dashboard/login');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(page.html, /<form method="post" action="\/dashboard\/login"/);
    assert.match(page.html, /<label for="email">/);
    assert.match(page.html, /<label for="password">/);
    const cookie = page.headers.getSetCookie().find((line) => line.startsWith('dashboard_login='));
    assert.ok(cookie);
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    assert.doesNotMatch(cookie, /Secure/i);
    assert.equal(field(page.html, '_csrf'), client.cookies.get('dashboard_login'));
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    const french = await client.get('/dashboard/login?lang=fr');
    assert.match(french.html, /<html lang="fr" dir="ltr">/);
    assert.match(french.html, /Mot de passe/);
    // Arabic, right to left, and every language offered, each named in itself.
    const arabic = await client.get('/dashboard/login?lang=ar');
    assert.match(arabic.html, /<html lang="ar" dir="rtl">/);
    assert.match(arabic.html, /كلمة المرور/);
    for (const name of ['العربية', 'Français', 'English']) assert.ok(arabic.html.includes(name), name);
    assert.match(arabic.html, /<input type="hidden" name="lang" value="ar">/);
  });

  test('signed in from the Arabic sign-in page, the session is stored in Arabic and its pages are right to left', async () => {
    const user = await createUser(t, business.id);
    const arabic = new FormClient(t);
    const answer = await arabic.signIn(user.email, user.password, { lang: 'ar' });
    assert.equal(answer.status, 303);
    const home = await arabic.get('/dashboard');
    assert.match(home.html, /<html lang="ar" dir="rtl">/);
    assert.match(home.html, /الرصيد المتاح/);
    const sessions = await t.runtime.db
      .selectFrom('dashboard_sessions')
      .select('lang')
      .where('user_id', '=', user.id)
      .execute();
    assert.deepEqual(
      sessions.map((session) => session.lang),
      ['ar'],
    );
    // A wrong password on the Arabic page answers in Arabic.
    const refused = await new FormClient(t).signIn(user.email, 'not the password', { lang: 'ar' });
    assert.equal(refused.status, 401);
    assert.match(refused.html, /البريد الإلكتروني أو كلمة المرور غير صحيحة/);
    // And the session switches to French and back from the foot of any page.
    assert.equal((await arabic.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' })).status, 303);
    assert.match((await arabic.get('/dashboard')).html, /<html lang="fr" dir="ltr">/);
  });

  test('wrong password, unknown email and disabled user get one generic 401 and no session', async () => {
    const user = await createUser(t, business.id);
    const disabled = await createUser(t, business.id);
    assert.equal((await cli(t, ['user', 'disable', disabled.id, '--json'])).code, 0);
    for (const [email, password] of [
      [user.email, 'wrong password!!'],
      [`nobody-${Date.now()}@example.com`, PASSWORD],
      [disabled.email, PASSWORD],
    ] as const) {
      const client = new FormClient(t);
      const answer = await client.signIn(email, password);
      assert.equal(answer.status, 401, email);
      assert.ok(answer.html.includes(GENERIC), email);
      assert.ok(!client.cookies.has('dashboard_session'));
    }
  });

  test('a right password signs in: session cookie, redirect to the next page, home shows the business', async () => {
    const { client } = await signedIn(t, business.id);
    const user = await createUser(t, business.id);
    const fresh = new FormClient(t);
    const answer = await fresh.signIn(user.email.toUpperCase(), user.password, {
      next: '/dashboard/payments?status=PAID',
    });
    assert.equal(answer.status, 303);
    assert.equal(answer.location, '/dashboard/payments?status=PAID');
    const cookie = answer.headers.getSetCookie().find((line) => line.startsWith('dashboard_session='));
    assert.ok(cookie);
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    assert.match(cookie, /Path=\//);
    const offsite = await new FormClient(t).signIn(user.email, user.password, { next: 'https://evil.example/' });
    assert.equal(offsite.location, '/dashboard');
    const home = await client.get('/dashboard');
    assert.equal(home.status, 200);
    assert.match(home.html, /Test business/);
    assert.match(home.html, /TEST MODE/);
    // The session is stored hashed: the cookie's text is nowhere in the database.
    const token = client.cookies.get('dashboard_session')!;
    const stored = await t.runtime.db
      .selectFrom('dashboard_sessions')
      .select('token_hash')
      .where('token_hash', '=', token)
      .executeTakeFirst();
    assert.equal(stored, undefined);
  });

  test('sign-in without the CSRF token or with another one is refused', async () => {
    const user = await createUser(t, business.id);
    const client = new FormClient(t);
    await client.get('/dashboard/login');
    const missing = await client.post('/dashboard/login', { email: user.email, password: user.password });
    assert.equal(missing.status, 403);
    const wrong = await client.post('/dashboard/login', {
      _csrf: 'x'.repeat(43),
      email: user.email,
      password: user.password,
    });
    assert.equal(wrong.status, 403);
    assert.ok(!client.cookies.has('dashboard_session'));
  });

  test('without a session every page sends the browser to sign-in, and POSTs change nothing', async () => {
    const client = new FormClient(t);
    for (const path of ['/dashboard', '/dashboard/payments', '/dashboard/developers/keys', '/dashboard/nope']) {
      const page = await client.get(path);
      assert.equal(page.status, 303, path);
      assert.equal(page.location, `/dashboard/login?next=${encodeURIComponent(path)}&notice=ended`);
    }
    const reference = await paidIntent(t, business);
    const post = await client.post(`/dashboard/payments/${reference}/refund`, { amount: '10' });
    assert.equal(post.status, 303);
    assert.match(post.location ?? '', /^\/dashboard\/login/);
    assert.equal(await refundsOf(t, reference), 0);
    const forged = new FormClient(t);
    forged.cookies.set('dashboard_session', 'not-a-session');
    assert.equal((await forged.get('/dashboard')).status, 303);
  });

  test('sign-out revokes the session: the old cookie no longer opens a page', async () => {
    const { client } = await signedIn(t, business.id);
    const cookie = client.cookies.get('dashboard_session')!;
    const out = await client.submit('/dashboard', '/dashboard/logout');
    assert.equal(out.status, 303);
    assert.equal(out.location, '/dashboard/login');
    const replayed = new FormClient(t);
    replayed.cookies.set('dashboard_session', cookie);
    const page = await replayed.get('/dashboard');
    assert.equal(page.status, 303);
    assert.match(page.location ?? '', /^\/dashboard\/login/);
  });

  test('an idle session expires: back to sign-in with a notice', async () => {
    const { client, user } = await signedIn(t, business.id);
    assert.equal((await client.get('/dashboard')).status, 200);
    await t.runtime.db
      .updateTable('dashboard_sessions')
      .set({ last_seen_at: new Date(Date.now() - 61 * 60_000) })
      .where('user_id', '=', user.id)
      .execute();
    const page = await client.get('/dashboard/payments');
    assert.equal(page.status, 303);
    const login = await client.get(page.location!);
    assert.match(login.html, /Your session ended/);
  });

  test('disabling a user or resetting its password revokes its sessions', async () => {
    const a = await signedIn(t, business.id);
    assert.equal((await cli(t, ['user', 'disable', a.user.id, '--json'])).code, 0);
    assert.equal((await a.client.get('/dashboard')).status, 303);

    const b = await signedIn(t, business.id);
    const newPassword = 'another long passphrase';
    const reset = await cli(t, ['user', 'reset-password', b.user.id, '--password', newPassword, '--json']);
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal((await b.client.get('/dashboard')).status, 303);
    assert.equal((await new FormClient(t).signIn(b.user.email, b.user.password)).status, 401);
    assert.equal((await new FormClient(t).signIn(b.user.email, newPassword)).status, 303);
    const tooShort = await cli(t, ['user', 'reset-password', b.user.id, '--password', 'short', '--json']);
    assert.equal(JSON.parse(tooShort.stderr).error.code, 'VALIDATION_ERROR');
  });

  test("a form without the CSRF token, or with another session's, is refused and changes nothing", async () => {
    const { client } = await signedIn(t, business.id);
    const other = await signedIn(t, business.id);
    const reference = await paidIntent(t, business);
    const path = `/dashboard/payments/${reference}`;
    const page = await client.get(path);
    const fields = hiddenFields(page.html, `${path}/refund`);
    const { _csrf: _token, ...withoutToken } = fields;
    const missing = await client.post(`${path}/refund`, { ...withoutToken, amount: '10' });
    assert.equal(missing.status, 403);
    assert.match(missing.html, /form expired/);
    const otherToken = hiddenFields((await other.client.get(path)).html, `${path}/refund`)._csrf!;
    const foreign = await client.post(`${path}/refund`, { ...fields, _csrf: otherToken, amount: '10' });
    assert.equal(foreign.status, 403);
    const logout = await client.post('/dashboard/logout', {});
    assert.equal(logout.status, 403);
    assert.equal(await refundsOf(t, reference), 0);
    assert.equal((await client.get('/dashboard')).status, 200, 'the refused sign-out left the session alone');
  });

  test('a viewer reads the pages its role opens but every change is refused with 403', async () => {
    const owner = await signedIn(t, business.id);
    const { client } = await signedIn(t, business.id, 'viewer');
    const reference = await paidIntent(t, business);
    const path = `/dashboard/payments/${reference}`;
    const page = await client.get(path);
    assert.equal(page.status, 200);
    assert.ok(!page.html.includes(`${path}/refund`), 'no refund form for a viewer');
    // A viewer who posts the owner's form with its own token is still refused.
    const ownerForm = hiddenFields((await owner.client.get(path)).html, `${path}/refund`);
    const csrf = field(page.html, '_csrf');
    const refund = await client.post(`${path}/refund`, { ...ownerForm, _csrf: csrf, amount: '10' });
    assert.equal(refund.status, 403);
    assert.match(refund.html, /Your role in this business does not allow this/);
    assert.equal(await refundsOf(t, reference), 0);
    for (const action of ['/dashboard/developers/keys', '/dashboard/payments']) {
      const answer = await client.post(action, {
        _csrf: csrf,
        _idem: 'abcdefghijklmnop1234',
        kind: 'secret',
        scopes: 'intents:read',
        amountType: 'FIXED',
        amount: '5',
      });
      assert.equal(answer.status, 403, action);
    }
    for (const view of ['/dashboard', '/dashboard/payments', '/dashboard/balance', '/dashboard/settings']) {
      assert.equal((await client.get(view)).status, 200, view);
    }
    // The developers' pages are for the roles that manage keys and webhooks (decision 083).
    for (const view of [
      '/dashboard/developers/keys',
      '/dashboard/developers/deliveries',
      '/dashboard/developers/events',
    ]) {
      assert.equal((await client.get(view)).status, 403, view);
    }
  });

  test('a double submit refunds once, in sequence and in a race', async () => {
    const { client } = await signedIn(t, business.id);
    const reference = await paidIntent(t, business, 10_000);
    const path = `/dashboard/payments/${reference}`;
    const fields = {
      ...hiddenFields((await client.get(path)).html, `${path}/refund`),
      amount: '10',
      reason: 'damaged',
    };
    const first = await client.post(`${path}/refund`, fields);
    assert.equal(first.status, 303);
    assert.equal(first.location, `${path}?notice=done`);
    const second = await client.post(`${path}/refund`, fields);
    assert.equal(second.status, 303);
    assert.equal(second.location, `${path}?notice=already`);
    assert.equal(await refundsOf(t, reference), 1);

    const raced = { ...hiddenFields((await client.get(path)).html, `${path}/refund`), amount: '5' };
    const answers = await Promise.all([1, 2, 3].map(() => client.post(`${path}/refund`, raced)));
    assert.deepEqual(
      answers.map((a) => a.status),
      [303, 303, 303],
    );
    assert.equal(await refundsOf(t, reference), 2);
    const page = await client.get(path);
    assert.match(page.html, /damaged/);
    assert.match(page.html, /15\.00\sMRU/);
  });

  test("a refused change comes back with its code's words and changes nothing", async () => {
    const { client } = await signedIn(t, business.id);
    const reference = await paidIntent(t, business, 1_000);
    const path = `/dashboard/payments/${reference}`;
    const answer = await client.submit(path, `${path}/refund`, { amount: '500' });
    assert.equal(answer.status, 303);
    assert.equal(answer.location, `${path}?error=REFUND_AMOUNT_INVALID`);
    assert.match((await client.get(answer.location!)).html, /The refund must be at least 0\.01 MRU/);
    const garbled = await client.submit(path, `${path}/refund`, { amount: 'ten' });
    assert.equal(garbled.location, `${path}?error=VALIDATION_ERROR`);
    assert.equal(await refundsOf(t, reference), 0);
    const missingToken = await client.post(`${path}/refund`, {
      _csrf: hiddenFields((await client.get(path)).html, `${path}/refund`)._csrf!,
      amount: '1',
    });
    assert.equal(missingToken.status, 400);
  });

  test('live mode only for an approved business', async () => {
    const { client } = await signedIn(t, business.id);
    const refused = await client.submit('/dashboard', '/dashboard/preferences', { environment: 'live' });
    assert.equal(refused.status, 303);
    assert.match(refused.location ?? '', /error=LIVE_ACCESS_NOT_APPROVED/);
    const testHome = (await client.get('/dashboard')).html;
    assert.match(testHome, /id="mode">TEST MODE/);
    // Why live mode is closed is written on the page, not hidden in a tooltip.
    assert.match(testHome, /id="live-not-approved">Live mode opens once the business is approved\./);
    assert.doesNotMatch(testHome, /value="live"/);

    const approved = await t.createBusiness({ approveLive: true });
    const live = await signedIn(t, approved.id);
    const switched = await live.client.submit('/dashboard', '/dashboard/preferences', { environment: 'live' });
    assert.equal(switched.status, 303);
    const home = await live.client.get('/dashboard');
    assert.match(home.html, /id="mode">Live mode/);
    assert.doesNotMatch(home.html, /TEST MODE/);
    const french = await live.client.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' });
    assert.equal(french.status, 303);
    assert.match((await live.client.get('/dashboard')).html, /Solde disponible/);
  });

  test("keys: roll shows the successor once and retires the old key; revoke stops a key; another business's key is not found", async () => {
    const { client } = await signedIn(t, business.id);
    const KEYS = '/dashboard/developers/keys';
    const created = await client.submit(KEYS, KEYS, { name: 'Till', kind: 'secret', scopes: ['intents:read'] });
    assert.equal(created.status, 200);
    const key = /id="new-key">([^<]+)</.exec(created.html)?.[1] ?? '';
    assert.ok(key.startsWith('sk_test_'));
    assert.equal((await t.request('GET', '/api/v1/dev/intents', { key })).status, 200);
    const record = await t.runtime.db
      .selectFrom('api_keys')
      .select('id')
      .where('key_hash', '=', hashKey(key))
      .executeTakeFirstOrThrow();
    const listed = await client.get(KEYS);
    assert.ok(!listed.html.includes(key));

    const rolled = await client.submit(KEYS, `${KEYS}/${record.id}/roll`, { overlap: '0' });
    assert.equal(rolled.status, 200);
    const successor = /id="new-key">([^<]+)</.exec(rolled.html)?.[1];
    assert.ok(successor && successor !== key);
    assert.equal((await t.request('GET', '/api/v1/dev/intents', { key })).status, 401);
    assert.equal((await t.request('GET', '/api/v1/dev/intents', { key: successor })).status, 200);

    const successorId = (
      await t.runtime.db
        .selectFrom('api_keys')
        .select('replaced_by')
        .where('id', '=', record.id)
        .executeTakeFirstOrThrow()
    ).replaced_by!;
    const revoked = await client.submit(KEYS, `${KEYS}/${successorId}/revoke`);
    assert.equal(revoked.status, 303);
    assert.equal((await t.request('GET', '/api/v1/dev/intents', { key: successor })).status, 403);

    const other = await t.createBusiness();
    const foreign = other.keyRecords[0]!.id;
    const page = await client.get(KEYS);
    const form = hiddenFields(page.html, KEYS);
    const refused = await client.post(`${KEYS}/${foreign}/revoke`, form);
    assert.equal(refused.status, 303);
    assert.equal(refused.location, `${KEYS}?error=API_KEY_NOT_FOUND`);
    const stillActive = await t.runtime.db
      .selectFrom('api_keys')
      .select('status')
      .where('id', '=', foreign)
      .executeTakeFirstOrThrow();
    assert.equal(stillActive.status, 'active');
  });

  test("webhook endpoints: a private URL is refused with the API's code", async () => {
    const { client } = await signedIn(t, business.id);
    const WEBHOOKS = '/dashboard/developers/webhooks';
    const refused = await client.submit(WEBHOOKS, WEBHOOKS, {
      url: 'http://127.0.0.1/hook',
      events: 'payment.created',
    });
    assert.equal(refused.status, 303);
    assert.equal(refused.location, `${WEBHOOKS}?error=INVALID_WEBHOOK_URL`);
    const unknownEvent = await client.submit(WEBHOOKS, WEBHOOKS, {
      url: 'https://example.com/hook',
      events: 'nope.event',
    });
    assert.equal(unknownEvent.location, `${WEBHOOKS}?error=INVALID_WEBHOOK_EVENT`);
  });

  test('what a merchant typed is shown escaped', async () => {
    const { client } = await signedIn(t, business.id);
    await createIntent(t, business.keys.secretTest, {
      amount: 500,
      label: '<script>alert(1)</script>',
      metadata: { order: '"><img src=x>' },
    });
    const list = await client.get('/dashboard/payments');
    assert.ok(!list.html.includes('<script>alert(1)</script>'));
    assert.ok(list.html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    const found = await client.get(`/dashboard/payments?q=${encodeURIComponent('"><img src=x>')}`);
    assert.ok(!found.html.includes('"><img src=x>'));
    assert.match(found.html, /· 1</);
  });

  test('the payment search finds an intent by reference, short code or a metadata value, not by a key', async () => {
    const { client } = await signedIn(t, business.id);
    const tag = `m-${Date.now()}`;
    const intent = await createIntent(t, business.keys.secretTest, {
      amount: 700,
      metadata: { orderId: tag, note: `${tag}-other` },
    });
    const hits = async (q: string) => {
      const page = await client.get(`/dashboard/payments?q=${encodeURIComponent(q)}`);
      assert.equal(page.status, 200);
      return page.html.includes(intent.referenceNumber);
    };
    assert.equal(await hits(intent.referenceNumber), true);
    assert.equal(await hits(intent.shortCode), true);
    assert.equal(await hits(tag), true);
    assert.equal(await hits(`${tag}-other`), true);
    assert.equal(await hits('orderId'), false);
    assert.equal(await hits(tag.slice(0, -1)), false);
    // The home page's latest payments start with this newest intent.
    const home = await client.get('/dashboard');
    const latest = home.html.slice(home.html.indexOf('id="latest"'));
    const shown = [...latest.matchAll(/href="\/dashboard\/payments\/([^"]+)"/g)].map((m) => m[1]);
    assert.equal(shown[0], intent.referenceNumber);
    assert.ok(shown.length <= 8, `${shown.length} latest payments`);
  });
});

describe('dashboard sign-in limits and secure cookies', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    // Still limiter clocks: the attempts of a test fall in one window however long they take.
    t = await startTestApp({
      config: { DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '3', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' },
      clock: manualClock(),
    });
    business = await t.createBusiness();
  });
  afterAll(() => t?.close());

  test('per email: after the limit even the right password is refused with 429', async () => {
    const user = await createUser(t, business.id);
    for (let i = 0; i < 3; i++)
      assert.equal((await new FormClient(t).signIn(user.email, 'wrong password!!')).status, 401);
    const limited = await new FormClient(t).signIn(user.email, user.password);
    assert.equal(limited.status, 429);
    assert.match(limited.html, /Too many sign-in attempts/);
    assert.equal(limited.headers.get('retry-after'), '60');
    // Another email from the same address is not held back by this one.
    const other = await createUser(t, business.id);
    assert.equal((await new FormClient(t).signIn(other.email, other.password)).status, 303);
  });

  test('per address: many emails from one address are cut off', async () => {
    const strict = await startTestApp({
      testDatabase: sharedDatabase(t.testDatabase),
      config: { DASHBOARD_LOGIN_PER_MINUTE_IP: '4', DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '100' },
      clock: manualClock(),
    });
    try {
      const user = await createUser(strict, business.id);
      for (let i = 0; i < 4; i++) {
        assert.equal((await new FormClient(strict).signIn(`guess${i}@example.com`, 'wrong password!!')).status, 401);
      }
      assert.equal((await new FormClient(strict).signIn(user.email, user.password)).status, 429);
    } finally {
      await strict.close();
    }
  });

  test('with an https PUBLIC_URL the cookies are Secure and __Host- prefixed', async () => {
    const secure = await startTestApp({
      testDatabase: sharedDatabase(t.testDatabase),
      config: { PUBLIC_URL: 'https://pay.example.com' },
    });
    try {
      const user = await createUser(secure, business.id);
      const client = new FormClient(secure);
      const page = await client.get('/dashboard/login');
      assert.match(
        page.headers.getSetCookie().join('\n'),
        /^__Host-dashboard_login=.*; Path=\/; HttpOnly; Secure; SameSite=Lax/m,
      );
      const answer = await client.post('/dashboard/login', {
        _csrf: field(page.html, '_csrf'),
        email: user.email,
        password: user.password,
      });
      assert.equal(answer.status, 303);
      assert.match(
        answer.headers.getSetCookie().join('\n'),
        /^__Host-dashboard_session=.*; Path=\/; HttpOnly; Secure; SameSite=Lax/m,
      );
      assert.equal((await client.get('/dashboard')).status, 200);
    } finally {
      await secure.close();
    }
  });
});
