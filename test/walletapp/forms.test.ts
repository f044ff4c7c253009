import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { getIntent } from '../intents/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { walletBalance } from '../checkout/support.js';
import { Browser, requestPayment } from './support.js';

/** A fresh funded sandbox wallet, signed in: each test's PIN attempts and payments are its own. */
async function signedIn(t: TestApp, phone: string): Promise<Browser> {
  expectStatus(await t.admin('POST', '/wallets', { phone, pin: '4321', environment: 'test', balance: 100_000 }), 201);
  const browser = new Browser(t);
  const signIn = await browser.signIn(phone, '4321');
  assert.equal(signIn.status, 303, signIn.html);
  return browser;
}

describe('the wallet app forms go through the one write path (issue 51)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Librairie El Emel' });
    sk = business.keys.secretTest;
  });
  afterAll(async () => {
    await t?.close();
  });

  test('the same approve form posted twice answers the first answer again, and debits once', async () => {
    const phone = '+22220000041';
    const browser = await signedIn(t, phone);
    const request = await requestPayment(t, sk, { phone }, 2500);
    const home = await browser.get('/wallet');
    const action = `/wallet/requests/${request.id}/approve`;
    const form = { ...Browser.formOf(home.html, action), pin: '4321' };
    const before = await walletBalance(t, phone);
    const first = await browser.post(action, form);
    assert.equal(first.status, 200, first.html);
    assert.match(first.html, /Paid\. <bdi>Librairie El Emel<\/bdi> received/);
    assert.equal(first.response.headers.get('idempotent-replayed'), null);
    // A resend after a lost answer (the same form, its same token), in French this time.
    const again = await browser.post(`${action}?lang=fr`, form);
    assert.equal(again.status, 422, 'another address is another form: its token is not reused');
    const resent = await browser.post(action, form);
    assert.equal(resent.status, 200, resent.html);
    assert.equal(resent.response.headers.get('idempotent-replayed'), 'true');
    assert.match(resent.html, /Paid\. <bdi>Librairie El Emel<\/bdi> received/);
    assert.equal(await walletBalance(t, phone), before - 2500, 'debited once');
    assert.equal((await getIntent(t, sk, request.intent)).status, 'PAID');
    // A new form (another token) after the answer: the request has ended.
    const fresh = await browser.post(action, { ...Browser.fields(home.html), pin: '4321' });
    assert.equal(fresh.status, 409);
    assert.match(fresh.html, /This request has ended/);
    assert.equal(await walletBalance(t, phone), before - 2500);
  });

  test('two clicks at once on approve: both see the one payment, the wallet is debited once', async () => {
    const phone = '+22220000042';
    const browser = await signedIn(t, phone);
    const request = await requestPayment(t, sk, { phone }, 3000);
    const home = await browser.get('/wallet?lang=ar');
    const action = `/wallet/requests/${request.id}/approve`;
    const form = { ...Browser.formOf(home.html, action), pin: '4321' };
    const before = await walletBalance(t, phone);
    const [one, two] = await Promise.all([
      browser.post(`${action}?lang=ar`, form),
      browser.post(`${action}?lang=ar`, form),
    ]);
    for (const answer of [one, two]) {
      assert.equal(answer.status, 200, answer.html);
      assert.match(answer.html, /تم الدفع/);
    }
    assert.equal(await walletBalance(t, phone), before - 3000);
  });

  test('decline, mute and unmute replay their first answer too', async () => {
    const phone = '+22220000043';
    const browser = await signedIn(t, phone);
    const request = await requestPayment(t, sk, { phone });
    const home = await browser.get('/wallet');
    const decline = `/wallet/requests/${request.id}/decline`;
    const declineForm = Browser.formOf(home.html, decline);
    assert.match((await browser.post(decline, declineForm)).html, /Declined\. Nothing was charged/);
    const declinedAgain = await browser.post(decline, declineForm);
    assert.equal(declinedAgain.status, 200);
    assert.equal(declinedAgain.response.headers.get('idempotent-replayed'), 'true');
    const mute = `/wallet/merchants/${business.id}/mute`;
    const muteForm = Browser.formOf(home.html, mute);
    await browser.post(mute, muteForm);
    const page = await browser.get('/wallet');
    const unmute = `/wallet/merchants/${business.id}/unmute`;
    assert.match((await browser.post(unmute, Browser.formOf(page.html, unmute))).html, /can send you requests again/);
    // The mute form sent again replays its answer: it does not mute the merchant a second time.
    const muteAgain = await browser.post(mute, muteForm);
    assert.equal(muteAgain.response.headers.get('idempotent-replayed'), 'true');
    assert.doesNotMatch((await browser.get('/wallet')).html, /id="muted"/, 'still unmuted');
  });

  test('every signed-in form refuses a missing or wrong CSRF token, and one without its key, doing nothing', async () => {
    const phone = '+22220000044';
    const browser = await signedIn(t, phone);
    const request = await requestPayment(t, sk, { phone });
    const home = await browser.get('/wallet');
    const before = await walletBalance(t, phone);
    const forms = [
      `/wallet/requests/${request.id}/approve`,
      `/wallet/requests/${request.id}/decline`,
      `/wallet/merchants/${business.id}/mute`,
      `/wallet/merchants/${business.id}/unmute`,
      '/wallet/sign-out',
    ];
    for (const action of forms) {
      const { _idem } = Browser.fields(home.html);
      const missing = await browser.post(action, { _idem, pin: '4321' });
      assert.equal(missing.status, 403, `${action} without its CSRF token`);
      assert.match(missing.html, /This form has expired/);
      const wrong = await browser.post(action, { _csrf: 'forged', _idem, pin: '4321' });
      assert.equal(wrong.status, 403, `${action} with a wrong CSRF token`);
      const keyless = await browser.post(action, { _csrf: Browser.csrfOf(home.html), pin: '4321' });
      assert.equal(keyless.status, 400, `${action} without its own key`);
      assert.match(keyless.html, /This form has expired/);
    }
    const after = await t.request('GET', `/api/v1/dev/payment-requests/${request.id}`, { key: sk });
    assert.equal(after.body.data.status, 'PENDING');
    assert.equal(await walletBalance(t, phone), before);
    assert.match((await browser.get('/wallet')).html, /id="balance"/, 'still signed in');
    assert.doesNotMatch((await browser.get('/wallet')).html, /id="muted"/, 'nothing muted');
  });

  test('a form posted without a session is sent to the sign-in page', async () => {
    const browser = new Browser(t);
    const page = await browser.post(`/wallet/merchants/${business.id}/mute`, { _csrf: 'x', _idem: 'y'.repeat(24) });
    assert.equal(page.status, 401);
    assert.match(page.html, /Your session has ended/);
  });
});
