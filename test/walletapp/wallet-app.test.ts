import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { act, getIntent } from '../intents/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { walletBalance } from '../checkout/support.js';
import { sendPayouts } from '../payouts/support.js';
import { Browser, PAYER, requestPayment } from './support.js';

describe('the wallet app (issue 51): sign-in, requests, mutes, history', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Boutique Tevragh Zeina' });
    sk = business.keys.secretTest;
  });
  afterAll(async () => {
    await t?.close();
  });

  test('signs in with a local 8-digit phone and the PIN: a session cookie, then the balance', async () => {
    const browser = new Browser(t);
    const signIn = await browser.signIn();
    assert.equal(signIn.status, 303, signIn.html);
    assert.equal(signIn.response.headers.get('location'), '/wallet');
    const cookie = signIn.response.headers.getSetCookie().find((line) => line.startsWith('wallet_session='));
    assert.ok(cookie, 'a session cookie');
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    const home = await browser.get('/wallet');
    expectStatus({ status: home.status, text: home.html, headers: home.response.headers, body: undefined }, 200);
    assert.match(home.html, /id="balance"/);
    assert.match(home.html, /TEST MODE/);
    const balance = await walletBalance(t, PAYER.phone);
    assert.ok(home.html.includes(new Intl.NumberFormat('en-US', { minimumFractionDigits: 2 }).format(balance / 100)));
  });

  test('a wrong PIN is refused in the page language; the fifth locks the wallet', async () => {
    const phone = '+22220000031';
    // A fresh sandbox wallet for this test alone, so its lock spoils no other test.
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '4321', environment: 'test', balance: 1000 }), 201);
    const browser = new Browser(t);
    const wrong = await browser.signIn(phone, '9999');
    assert.equal(wrong.status, 401);
    assert.match(wrong.html, /Wrong phone or PIN/);
    const french = await browser.get('/wallet?mode=test&lang=fr');
    const frenchWrong = await browser.post('/wallet/sign-in?lang=fr', {
      _csrf: Browser.csrfOf(french.html),
      phone,
      pin: '9999',
      mode: 'test',
    });
    assert.match(frenchWrong.html, /Téléphone ou code PIN incorrect/);
    let last = frenchWrong;
    for (let attempt = 3; attempt <= 5; attempt++) last = await browser.signIn(phone, '9999');
    assert.equal(last.status, 403);
    assert.match(last.html, /locked for <bdi dir="ltr">15<\/bdi> minutes/);
    const right = await browser.signIn(phone, '4321');
    assert.equal(right.status, 403, 'locked even with the right PIN');
  });

  test('a sign-in form without its token, or with a bad phone, is refused', async () => {
    const browser = new Browser(t);
    const forged = await browser.post('/wallet/sign-in', {
      _csrf: 'forged',
      phone: PAYER.local,
      pin: PAYER.pin,
      mode: 'test',
    });
    assert.equal(forged.status, 403);
    assert.match(forged.html, /This form has expired/);
    const badPhone = await browser.signIn('123', PAYER.pin);
    assert.equal(badPhone.status, 400);
    const arabic = await browser.get('/wallet?mode=test', { 'accept-language': 'ar' });
    assert.match(arabic.html, /dir="rtl"/);
    assert.match(arabic.html, /الدخول إلى محفظتك/);
  });

  test('a signed-in form without the session CSRF token does nothing', async () => {
    const browser = new Browser(t);
    await browser.signIn();
    const request = await requestPayment(t, sk);
    const forged = await browser.post(`/wallet/requests/${request.id}/decline`, { _csrf: 'forged' });
    assert.equal(forged.status, 403);
    const after = await t.request('GET', `/api/v1/dev/payment-requests/${request.id}`, { key: sk });
    assert.equal(after.body.data.status, 'PENDING');
    const home = await browser.get('/wallet');
    await browser.post(`/wallet/requests/${request.id}/decline`, Browser.fields(home.html));
  });

  test('pending requests: the business name, amount, message, reference and time left; approve pays the intent', async () => {
    const browser = new Browser(t);
    await browser.signIn();
    const request = await requestPayment(t, sk, { phone: PAYER.phone, message: 'Facture 42', expiresIn: 600 });
    const home = await browser.get('/wallet');
    assert.match(home.html, new RegExp(`id="request-${request.id}"`));
    assert.match(home.html, /Boutique Tevragh Zeina/);
    assert.match(home.html, /Facture 42/);
    assert.match(home.html, /50\.00/);
    assert.ok(home.html.includes(request.intent));
    assert.match(home.html, /class="countdown"[^>]*>(9|10):\d\d</);
    const before = await walletBalance(t, PAYER.phone);
    const wrongPin = await browser.post(`/wallet/requests/${request.id}/approve`, {
      ...Browser.fields(home.html),
      pin: '0000',
    });
    assert.equal(wrongPin.status, 401);
    const approved = await browser.post(`/wallet/requests/${request.id}/approve?lang=fr`, {
      ...Browser.fields(home.html),
      pin: PAYER.pin,
    });
    assert.equal(approved.status, 200, approved.html);
    assert.match(approved.html, /Payé\. /);
    assert.equal((await getIntent(t, sk, request.intent)).status, 'PAID');
    assert.equal(await walletBalance(t, PAYER.phone), before - 5000);
    const again = await browser.post(`/wallet/requests/${request.id}/approve`, {
      ...Browser.fields(home.html),
      pin: PAYER.pin,
    });
    assert.equal(again.status, 409);
    assert.match(again.html, /This request has ended/);
    // History: the payment, in the page's language.
    const history = await browser.get('/wallet?lang=fr');
    assert.match(history.html, /Payé à <bdi>Boutique Tevragh Zeina<\/bdi>/);
  });

  test('decline ends the request, nothing charged', async () => {
    const browser = new Browser(t);
    await browser.signIn();
    const request = await requestPayment(t, sk);
    const home = await browser.get('/wallet');
    const declined = await browser.post(`/wallet/requests/${request.id}/decline`, Browser.fields(home.html));
    assert.equal(declined.status, 200);
    assert.match(declined.html, /Declined\. Nothing was charged/);
    const after = await t.request('GET', `/api/v1/dev/payment-requests/${request.id}`, { key: sk });
    assert.equal(after.body.data.status, 'DECLINED');
  });

  test('a request whose time is up takes no answer: the page says it ended, in the page language', async () => {
    const browser = new Browser(t);
    await browser.signIn();
    const request = await requestPayment(t, sk);
    const home = await browser.get('/wallet');
    await t.runtime.db
      .updateTable('payment_requests')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', request.id)
      .execute();
    const page = await browser.get('/wallet');
    assert.doesNotMatch(page.html, new RegExp(`id="request-${request.id}"`), 'a due request is no longer listed');
    const late = await browser.post(`/wallet/requests/${request.id}/approve?lang=fr`, {
      ...Browser.fields(home.html),
      pin: PAYER.pin,
    });
    assert.equal(late.status, 409);
    assert.match(late.html, /Cette demande est terminée/);
    const unknown = await browser.post('/wallet/requests/PR-0000/decline', Browser.fields(home.html));
    assert.equal(unknown.status, 404);
  });

  test('a request approved with too little balance fails, in the page language', async () => {
    const phone = '+22220000032';
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '4321', environment: 'test', balance: 100 }), 201);
    const browser = new Browser(t);
    await browser.signIn(phone, '4321');
    const request = await requestPayment(t, sk, { phone });
    const home = await browser.get('/wallet?lang=ar');
    const failed = await browser.post(`/wallet/requests/${request.id}/approve?lang=ar`, {
      ...Browser.fields(home.html),
      pin: '4321',
    });
    assert.equal(failed.status, 200);
    assert.match(failed.html, /رصيدك لا يكفي/);
  });

  test('muting a merchant: its next request is refused with PAYMENT_REQUESTS_MUTED; unmuting allows it again', async () => {
    const phone = '+22220000033';
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '4321', environment: 'test', balance: 100_000 }), 201);
    const browser = new Browser(t);
    await browser.signIn(phone, '4321');
    const home = await browser.get('/wallet');
    const muted = await browser.post(`/wallet/merchants/${business.id}/mute`, Browser.fields(home.html));
    assert.equal(muted.status, 200);
    assert.match(muted.html, /can no longer send you requests/);
    const intent = await t.request('POST', '/api/v1/dev/intents', {
      key: sk,
      body: { amount: 5000 },
      idempotencyKey: true,
    });
    const refused = await t.request('POST', `/api/v1/dev/intents/${intent.body.data.referenceNumber}/requests`, {
      key: sk,
      body: { phone },
      idempotencyKey: true,
    });
    expectError(refused, 403, 'PAYMENT_REQUESTS_MUTED');
    const unmuted = await browser.post(`/wallet/merchants/${business.id}/unmute`, Browser.fields(home.html));
    assert.match(unmuted.html, /can send you requests again/);
    await requestPayment(t, sk, { phone });
    const unknown = await browser.post('/wallet/merchants/nobody/mute', Browser.fields(home.html));
    assert.equal(unknown.status, 404);
  });

  test('sign-out ends the session; an idle session ends too', async () => {
    const browser = new Browser(t);
    await browser.signIn();
    const token = browser.cookies.get('wallet_session')!;
    const home = await browser.get('/wallet');
    const out = await browser.post('/wallet/sign-out', Browser.fields(home.html));
    assert.equal(out.status, 303);
    browser.cookies.set('wallet_session', token);
    const after = await browser.get('/wallet');
    assert.match(after.html, /id="sign-in"/, 'the old cookie opens nothing');

    const idle = new Browser(t);
    await idle.signIn();
    await t.runtime.db
      .updateTable('wallet_sessions' as never)
      .set({ last_seen_at: new Date(Date.now() - 31 * 60_000) } as never)
      .execute();
    const ended = await idle.get('/wallet');
    assert.match(ended.html, /id="sign-in"/);
    const form = await idle.post('/wallet/sign-out', { _csrf: 'x' });
    assert.equal(form.status, 401);
    assert.match(form.html, /Your session has ended/);
  });

  test('the event stream tells a signed-in page of a new request within a second', async () => {
    const browser = new Browser(t);
    await browser.signIn();
    const refused = await fetch(`${t.baseUrl}/wallet/events`);
    assert.equal(refused.status, 401);
    await refused.text();
    const controller = new AbortController();
    const stream = await fetch(`${t.baseUrl}/wallet/events`, {
      headers: { cookie: browser.cookieHeader() },
      signal: controller.signal,
    });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /text\/event-stream/);
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    const request = await requestPayment(t, sk);
    let text = '';
    const deadline = Date.now() + 5000;
    while (!text.includes('event: request') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    controller.abort();
    assert.match(text, /event: request\ndata: \{"id":"PR-/);
    assert.ok(text.includes(request.id));
  });

  test('history: a refund received and a payout received, in the page language and number format', async () => {
    const phone = '+22220000034';
    expectStatus(
      await t.admin('POST', '/wallets', { phone, pin: '4321', environment: 'test', balance: 1_000_000 }),
      201,
    );
    const browser = new Browser(t);
    await browser.signIn(phone, '4321');
    const request = await requestPayment(t, sk, { phone }, 123_456);
    const home = await browser.get('/wallet');
    const approved = await browser.post(`/wallet/requests/${request.id}/approve`, {
      ...Browser.fields(home.html),
      pin: '4321',
    });
    assert.equal(approved.status, 200, approved.html);
    expectStatus(await act(t, sk, request.intent, 'refund', { amount: 23_456 }), 200);
    const payout = await t.request('POST', '/api/v1/dev/payouts', {
      key: sk,
      body: { amount: 10_000, destination: { type: 'WALLET', phone }, description: 'Prime' },
      idempotencyKey: true,
    });
    expectStatus(payout, 201);
    await sendPayouts(t);
    const french = await browser.get('/wallet?lang=fr');
    const history = french.html.slice(french.html.indexOf('id="history"'));
    assert.match(history, /Payé à <bdi>Boutique Tevragh Zeina<\/bdi>/);
    assert.match(history, /1\u202f234,56|1 234,56/);
    assert.match(history, /Remboursement de <bdi>Boutique Tevragh Zeina<\/bdi>/);
    assert.match(history, /234,56/);
    assert.match(history, /Reçu de <bdi>Boutique Tevragh Zeina<\/bdi>/);
    assert.match(history, /\+100,00/);
  });

  test('installable: a manifest in the page language, its icons, linked from every page', async () => {
    const page = await new Browser(t).get('/wallet?lang=ar');
    assert.match(page.html, /<link rel="manifest" href="\/wallet\/manifest.webmanifest\?lang=ar">/);
    assert.match(page.response.headers.get('content-security-policy') ?? '', /manifest-src 'self'/);
    const manifest = await fetch(`${t.baseUrl}/wallet/manifest.webmanifest?lang=ar`);
    assert.match(manifest.headers.get('content-type') ?? '', /application\/manifest\+json/);
    const body = (await manifest.json()) as { name: string; dir: string; icons: { src: string; type: string }[] };
    assert.equal(body.name, 'المحفظة');
    assert.equal(body.dir, 'rtl');
    for (const icon of body.icons) {
      const image = await fetch(`${t.baseUrl}${icon.src}`);
      assert.equal(image.status, 200, icon.src);
      assert.equal(image.headers.get('content-type'), icon.type);
      await image.arrayBuffer();
    }
  });
});
