import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { act, createIntent } from '../intents/support.js';
import { freshPhone, ledgerIsSound, orderAction, setFeePlan, simulate } from '../orders/support.js';
import { createProduct } from '../products/support.js';
import { sendPayouts } from '../payouts/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { Browser, requestPayment } from './support.js';

/** The history section of a wallet page. */
function historyOf(html: string): string {
  const start = html.indexOf('id="history"');
  assert.ok(start >= 0, 'the page has its history');
  return html.slice(start, html.indexOf('</section>', start));
}

/** The history's lines, one per payment or payout, each with what is drawn under it. */
function linesOf(html: string): string[] {
  return historyOf(html).split('<dt>').slice(1);
}

describe('the wallet app history (issue 51)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Café Sahel' });
    sk = business.keys.secretTest;
    // The payer bears a fee of 1.00 on every payment to this business.
    await setFeePlan(t, business.id, { providerBps: 250, payerFee: 100 });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('payments of every channel, with the merchant, the payer fee and the refunds under their payment', async () => {
    const phone = freshPhone();
    const tea = await createProduct(t, sk, { name: 'Thé', price: 2000, quantity: 100, status: 'ACTIVE' });
    // A storefront order paid from the wallet (the sandbox opens the wallet, PIN 1234), refunded in part.
    const order = await simulate(t, sk, [{ productId: tea.id, quantity: 2 }], phone);
    expectStatus(order, 201);
    const orderRef: string = order.body.data.referenceNumber;
    expectStatus(await orderAction(t, sk, `/${orderRef}/refund`, { amount: 1500 }), 200);
    // An intent paid by the sandbox's simulation, and one by a request approved in the wallet app.
    const simulated = await createIntent(t, sk, { amount: 7000 });
    expectStatus(await act(t, sk, simulated.referenceNumber, 'simulate', { payerPhone: phone }), 200);
    const browser = new Browser(t);
    const signIn = await browser.signIn(phone, '1234');
    assert.equal(signIn.status, 303, signIn.html);
    const request = await requestPayment(t, sk, { phone }, 3000);
    const home = await browser.get('/wallet');
    const approve = `/wallet/requests/${request.id}/approve`;
    const approved = await browser.post(approve, { ...Browser.formOf(home.html, approve), pin: '1234' });
    assert.equal(approved.status, 200, approved.html);
    expectStatus(await act(t, sk, request.intent, 'refund', { amount: 500 }), 200);
    // A payout received.
    const payout = await t.request('POST', '/api/v1/dev/payouts', {
      key: sk,
      body: { amount: 2500, destination: { type: 'WALLET', phone }, description: 'Bonus' },
      idempotencyKey: true,
    });
    expectStatus(payout, 201);
    await sendPayouts(t);

    const french = await browser.get('/wallet?lang=fr');
    const lines = linesOf(french.html);
    assert.equal(lines.length, 4, historyOf(french.html));
    const [payoutLine, requestLine, simulatedLine, orderLine] = lines as [string, string, string, string];
    assert.match(payoutLine, /Reçu de <bdi>Café Sahel<\/bdi>/);
    assert.match(payoutLine, /\+25,00/);
    assert.match(requestLine, /Payé à <bdi>Café Sahel<\/bdi>/);
    assert.ok(requestLine.includes(request.intent));
    assert.match(requestLine, /−30,00/);
    assert.match(requestLine, /data-kind="FEE"[^]*Frais[^]*−1,00/);
    assert.match(requestLine, /data-kind="REFUND">Remboursement de <bdi>Café Sahel<\/bdi>[^]*\+5,00/);
    assert.ok(simulatedLine.includes(simulated.referenceNumber));
    assert.match(simulatedLine, /−70,00/);
    assert.doesNotMatch(simulatedLine, /data-kind="REFUND"/);
    assert.ok(orderLine.includes(orderRef));
    assert.match(orderLine, /−40,00/);
    assert.match(orderLine, /data-kind="FEE"/);
    assert.match(orderLine, /data-kind="REFUND">Remboursement de <bdi>Café Sahel<\/bdi>[^]*\+15,00/);

    // Arabic: right to left, the same lines in its words; the pages keep Latin digits.
    const arabic = await browser.get('/wallet?lang=ar');
    assert.match(arabic.html, /dir="rtl"/);
    const arabicHistory = historyOf(arabic.html);
    assert.match(arabicHistory, /دفع إلى <bdi>Café Sahel<\/bdi>/);
    assert.match(arabicHistory, /استرداد من/);
    assert.match(arabicHistory, /الرسوم/);
    assert.match(arabicHistory, /30\.00/);
    await ledgerIsSound(t);
  });

  test('the history shows the latest 50 lines, and an "older" link reads the rest', async () => {
    const phone = freshPhone();
    const references: string[] = [];
    for (let i = 0; i < 52; i++) {
      const intent = await createIntent(t, sk, { amount: 100 + i });
      expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: phone }), 200);
      references.push(intent.referenceNumber);
    }
    const browser = new Browser(t);
    assert.equal((await browser.signIn(phone, '1234')).status, 303);
    const newest = await browser.get('/wallet?lang=en');
    const first = linesOf(newest.html);
    assert.equal(first.length, 50);
    assert.ok(first[0]!.includes(references[51]!), 'the newest first');
    const older = /<a href="([^"]+)" id="history-older">Older<\/a>/.exec(historyOf(newest.html));
    assert.ok(older, 'a link to the older lines');
    assert.doesNotMatch(historyOf(newest.html), /id="history-newest"/);
    const next = await browser.get(older[1]!.replaceAll('&amp;', '&'));
    assert.equal(next.status, 200);
    const rest = linesOf(next.html);
    assert.equal(rest.length, 2);
    assert.ok(rest[0]!.includes(references[1]!) && rest[1]!.includes(references[0]!));
    assert.doesNotMatch(historyOf(next.html), /id="history-older"/);
    assert.match(historyOf(next.html), /id="history-newest"/);
    // A cursor that is not one draws the newest page.
    const bad = await browser.get('/wallet?before=yesterday');
    assert.equal(bad.status, 200);
    assert.equal(linesOf(bad.html).length, 50);
  });
});
