import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { accountBalances } from '../../src/modules/payments/ledger.js';
import { act, createIntent } from '../intents/support.js';
import { createSeller, getSeller } from '../sellers/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { hiddenFields, signedIn, type FormClient } from './support.js';

/**
 * Issue 52 item 5: a seller's page shows its activity, payouts, payments and statements, takes its payout
 * schedule, and lets an owner pay it out (review, then confirm) from its own balance.
 */

const SELLERS = '/dashboard/sellers';

/** The seller's balance through the API. */
async function sellerBalance(t: TestApp, key: string, id: string): Promise<number> {
  const response = await t.request('GET', `/api/v1/dev/sellers/${id}/balance`, { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

/** A paid intent giving `seller` `share` centimes; its reference. */
async function splitPayment(t: TestApp, key: string, seller: string, amount: number, share: number) {
  const intent = await createIntent(t, key, { amount, splits: [{ seller, amount: share }] });
  expectStatus(await act(t, key, intent.referenceNumber, 'simulate'), 200);
  return intent.referenceNumber as string;
}

async function sellerPayouts(t: TestApp, seller: string) {
  return t.runtime.db
    .selectFrom('payouts')
    .select(['reference', 'amount', 'fee', 'destination_phone'])
    .where('seller_id', '=', seller)
    .execute();
}

async function payoutStatus(t: TestApp, reference: string): Promise<string> {
  const row = await t.runtime.db
    .selectFrom('payouts')
    .select('status')
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
  return row.status;
}

function section(html: string, id: string): string {
  const start = html.indexOf(`id="${id}"`);
  assert.ok(start >= 0, `no #${id}`);
  return html.slice(start, html.indexOf('</section>', start));
}

describe("dashboard: a seller's page (issue 52 item 5)", () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let owner: FormClient;
  let viewer: FormClient;

  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000',
      },
    });
    business = await t.createBusiness({ name: 'Marché' });
    sk = business.keys.secretTest;
    // A flat payout fee, so that the review's total is amount + 50 centimes.
    expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 50 }), 200);
    owner = (await signedIn(t, business.id)).client;
    viewer = (await signedIn(t, business.id, 'viewer')).client;
  });
  afterAll(() => t?.close());

  test('the payout schedule is chosen on the new and edit forms, and shown', async () => {
    const created = await owner.submit(`${SELLERS}/new`, SELLERS, {
      name: 'Daily stall',
      phone: '36000201',
      commission: '',
      payoutSchedule: 'DAILY',
    });
    assert.equal(created.status, 303, created.html.slice(0, 600));
    const id = /sellers\/(SL-\d{16})/.exec(created.location ?? '')![1]!;
    assert.equal((await getSeller(t, sk, id)).payoutSchedule, 'DAILY');
    const page = await owner.get(`${SELLERS}/${id}`);
    assert.match(page.html, /id="schedule-shown" data-schedule="DAILY">Daily</);
    assert.match(page.html, /<option value="DAILY" selected>Daily<\/option>/);
    const path = `${SELLERS}/${id}`;
    const edited = await owner.submit(path, path, {
      name: 'Daily stall',
      phone: '+22236000201',
      commission: '0',
      status: 'ACTIVE',
      payoutSchedule: 'MANUAL',
    });
    assert.equal(edited.status, 303);
    assert.equal((await getSeller(t, sk, id)).payoutSchedule, 'MANUAL');
    // A schedule that is not one of the options is the schema's 400, nothing changed.
    const bad = await owner.submit(path, path, {
      name: 'Daily stall',
      phone: '+22236000201',
      status: 'ACTIVE',
      payoutSchedule: 'WEEKLY',
    });
    assert.equal(bad.status, 400);
    assert.equal((await getSeller(t, sk, id)).payoutSchedule, 'MANUAL');
  });

  test('activity, newest first, each linked to its source; the list reads the same balance', async () => {
    const seller = await createSeller(t, sk, { name: 'Busy stall', phone: '+22236000202' });
    const first = await splitPayment(t, sk, seller.id, 10_000, 4_000);
    const second = await splitPayment(t, sk, seller.id, 5_000, 1_500);
    const page = await owner.get(`${SELLERS}/${seller.id}`);
    assert.equal(page.status, 200);
    assert.match(page.html, /<p class="figure" id="balance">55\.00\u00a0MRU<\/p>/);
    const activity = section(page.html, 'h-activity');
    const sources = [...activity.matchAll(/data-kind="([a-z_]+)" href="([^"]+)">(PI-\d+)</g)].map((m) => [
      m[1],
      m[2],
      m[3],
    ]);
    assert.deepEqual(sources, [
      ['payment_intent', `/dashboard/payments/${second}`, second],
      ['payment_intent', `/dashboard/payments/${first}`, first],
    ]);
    assert.match(activity, /data-type="payment"/);
    assert.match(section(page.html, 'h-seller-payouts'), /id="no-seller-payouts"/);
    // Its payments, newest first, each with the seller's net share as the payment recorded it.
    const payments = section(page.html, 'h-seller-payments');
    const listed = [...payments.matchAll(/<tr id="payment-(PI-\d+)" data-status="([A-Z]+)">/g)].map((m) => [
      m[1],
      m[2],
    ]);
    assert.deepEqual(listed, [
      [second, 'PAID'],
      [first, 'PAID'],
    ]);
    assert.ok(payments.includes(`href="/dashboard/payments/${second}"`));
    const shares = await t.runtime.db
      .selectFrom('payment_intents')
      .select(['reference_number', 'split_shares'])
      .where('reference_number', 'in', [first, second])
      .execute();
    for (const { reference_number, split_shares } of shares) {
      const net = split_shares!.find((share) => share.seller === seller.id)!.net;
      const row = new RegExp(`id="payment-${reference_number}"[\\s\\S]*?</tr>`).exec(payments)![0];
      assert.ok(row.includes(`>${(net / 100).toFixed(2)}\u00a0MRU</td>`), `${reference_number} share ${net}`);
    }
    // The month's statement, from the seller's page.
    const month = new Date().toISOString().slice(0, 7);
    const csvUrl = `${SELLERS}/${seller.id}/statements/${month}.csv`;
    assert.ok(page.html.includes(`href="${csvUrl}"`));
    const csv = await owner.get(csvUrl);
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    assert.ok(csv.html.includes(seller.id), 'the statement names the seller');
    assert.ok(csv.html.includes(first) && csv.html.includes(second));
    const html = await owner.get(`${SELLERS}/${seller.id}/statements/${month}.html`);
    assert.equal(html.status, 200);
    assert.equal((await owner.get(`${SELLERS}/SL-0000000000000000/statements/${month}.csv`)).status, 404);
    assert.equal((await owner.get(`${SELLERS}/${seller.id}/statements/2026-13.csv`)).status, 400);

    // The list's one read of many balances: each seller's, 0 for one without movements, none asked none read.
    const balances = await accountBalances(t.runtime.db, 'test', 'seller', [seller.id, 'SL-0000000000000000']);
    assert.deepEqual(
      [...balances],
      [
        [seller.id, 5_500],
        ['SL-0000000000000000', 0],
      ],
    );
    assert.equal((await accountBalances(t.runtime.db, 'test', 'seller', [])).size, 0);
    const list = await owner.get(SELLERS);
    const row = new RegExp(`<tr id="${seller.id}">([\\s\\S]*?)</tr>`).exec(list.html)![1]!;
    assert.match(row, /55\.00\u00a0MRU/);
  });

  test('an owner pays the seller out: review (fee, total, balance after), confirm once, listed on its page', async () => {
    const seller = await createSeller(t, sk, { name: 'Paid stall', phone: '+22236000203' });
    await splitPayment(t, sk, seller.id, 10_000, 3_000);
    const path = `${SELLERS}/${seller.id}`;
    const review = await owner.submit(path, `${path}/payouts/review`, { amount: '20', description: 'Week 49' });
    assert.equal(review.status, 200, review.html.slice(0, 600));
    assert.match(review.html, /id="review-phone">\+22236000203</);
    assert.match(review.html, /id="review-amount">20\.00\u00a0MRU</);
    assert.match(review.html, /id="review-fee">0\.50\u00a0MRU</);
    assert.match(review.html, /id="review-total"><strong>20\.50\u00a0MRU</);
    assert.match(review.html, /id="review-available">30\.00\u00a0MRU</);
    assert.match(review.html, /id="review-after">9\.50\u00a0MRU</);
    assert.deepEqual(await sellerPayouts(t, seller.id), [], 'a review writes nothing');

    const form = { ...hiddenFields(review.html, `${path}/payouts`) };
    const confirmed = await owner.post(`${path}/payouts`, form);
    assert.equal(confirmed.status, 303, confirmed.html.slice(0, 600));
    const made = await sellerPayouts(t, seller.id);
    assert.equal(made.length, 1);
    assert.deepEqual([made[0]!.amount, made[0]!.fee, made[0]!.destination_phone], [2_000, 50, '+22236000203']);
    assert.equal(confirmed.location, `/dashboard/payouts/${made[0]!.reference}?notice=done`);
    assert.equal(await sellerBalance(t, sk, seller.id), 950);
    // The payout's page names the seller it paid, linked to the seller's page.
    const payoutPage = await owner.get(`/dashboard/payouts/${made[0]!.reference}`);
    assert.ok(payoutPage.html.includes(`id="seller" href="${path}">${seller.id}<`));
    // The same form again: the payout made, not a second one.
    const again = await owner.post(`${path}/payouts`, form);
    assert.equal(again.status, 303);
    assert.match(again.location ?? '', /notice=already/);
    assert.equal((await sellerPayouts(t, seller.id)).length, 1);
    // Recorded once, as the member who paid (issue 53's audit log).
    const recorded = await t.runtime.db
      .selectFrom('audit_log')
      .select(['actor_kind', 'details'])
      .where('action', '=', 'payout.created')
      .where('target_id', '=', made[0]!.reference)
      .execute();
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.actor_kind, 'user');
    assert.equal(recorded[0]!.details.seller, seller.id);

    const page = await owner.get(path);
    const payouts = section(page.html, 'h-seller-payouts');
    assert.ok(payouts.includes(`href="/dashboard/payouts/${made[0]!.reference}"`));
    assert.match(payouts, /20\.00\u00a0MRU/);
    const activity = section(page.html, 'h-activity');
    assert.match(activity, /data-type="payout_fee"/);
    assert.match(activity, /data-kind="payout" href="\/dashboard\/payouts\/PO-/);
  });

  test('a refused payout: the amount at its field, a balance too small (402), a balance gone since the review', async () => {
    const seller = await createSeller(t, sk, { name: 'Short stall', phone: '+22236000204' });
    await splitPayment(t, sk, seller.id, 2_000, 1_000);
    const path = `${SELLERS}/${seller.id}`;
    const bad = await owner.submit(path, `${path}/payouts/review`, { amount: '1,2,3' });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /id="pay-out-amount-error">Enter an amount in MRU/);
    assert.match(bad.html, /id="pay-out-amount" name="amount" value="1,2,3"/);
    const zero = await owner.submit(path, `${path}/payouts/review`, { amount: '0' });
    assert.equal(zero.status, 400);
    assert.match(zero.html, /id="pay-out-amount-error">Enter an amount between 0\.01 MRU and/);

    const short = await owner.submit(path, `${path}/payouts/review`, { amount: '10' });
    assert.equal(short.status, 402);
    assert.match(short.html, /id="pay-out-error">The seller&#39;s balance \(10\.00\u00a0MRU\) cannot cover/);

    // Reviewed with enough, then the balance is spent through the API before the confirm.
    const review = await owner.submit(path, `${path}/payouts/review`, { amount: '9' });
    assert.equal(review.status, 200);
    expectStatus(
      await t.request('POST', '/api/v1/dev/payouts', {
        key: sk,
        body: { amount: 900, seller: seller.id },
        idempotencyKey: true,
      }),
      201,
    );
    const late = await owner.post(`${path}/payouts`, hiddenFields(review.html, `${path}/payouts`));
    assert.equal(late.status, 402);
    assert.match(late.html, /id="pay-out-error">The seller&#39;s balance no longer covers this payout/);
    assert.equal((await sellerPayouts(t, seller.id)).length, 1, 'only the API payout');

    // Another business's seller does not exist here.
    const other = await t.createBusiness();
    const foreign = await createSeller(t, other.keys.secretTest, { name: 'Not ours' });
    const csrf = hiddenFields((await owner.get(path)).html, `${path}/payouts/review`)._csrf!;
    const form = { _csrf: csrf, _idem: 'forgedSellerPayout0000001', amount: '1' };
    const refused = await owner.post(`${SELLERS}/${foreign.id}/payouts`, form);
    assert.equal(refused.status, 303);
    assert.match(refused.location ?? '', /error=SELLER_NOT_FOUND/);
    assert.equal((await owner.post(`${SELLERS}/${foreign.id}/payouts/review`, { ...form })).status, 404);
    assert.deepEqual(await sellerPayouts(t, foreign.id), []);
  });

  test('payouts show their status (a cancelled one does not look paid); payments, 10 a page, unpaid with no share', async () => {
    const seller = await createSeller(t, sk, { name: 'Paged stall', phone: '+22236000207' });
    const paid = await splitPayment(t, sk, seller.id, 10_000, 5_000);
    const payOut = async (amount: number) => {
      const response = await t.request('POST', '/api/v1/dev/payouts', {
        key: sk,
        body: { amount, seller: seller.id },
        idempotencyKey: true,
      });
      expectStatus(response, 201);
      return response.body.data.referenceNumber as string;
    };
    const cancelled = await payOut(1_000);
    const kept = await payOut(2_000);
    expectStatus(
      await t.request('POST', `/api/v1/dev/payouts/${cancelled}/cancel`, { key: sk, idempotencyKey: true }),
      200,
    );
    const keptStatus = await payoutStatus(t, kept);
    const open: string[] = [];
    for (let i = 0; i < 10; i++) {
      open.push(
        (await createIntent(t, sk, { amount: 1_000 + i, splits: [{ seller: seller.id, amount: 100 }] }))
          .referenceNumber,
      );
    }
    const path = `${SELLERS}/${seller.id}`;
    const page = await viewer.get(path);
    assert.equal(page.status, 200);
    const payouts = section(page.html, 'h-seller-payouts');
    const rows = [...payouts.matchAll(/<tr id="payout-(PO-[^"]+)" data-status="([A-Z]+)">[\s\S]*?<\/tr>/g)];
    assert.deepEqual(
      rows.map((m) => [m[1], m[2]]),
      [
        [kept, keptStatus],
        [cancelled, 'CANCELLED'],
      ],
    );
    assert.match(rows[1]![0], /href="\/dashboard\/payouts\/PO-[^"]+"/);
    assert.match(rows[1]![0], /10\.00\u00a0MRU[\s\S]*>Cancelled</);
    assert.doesNotMatch(rows[1]![0], />Paid</);

    const payments = section(page.html, 'h-seller-payments');
    const listed = [...payments.matchAll(/<tr id="payment-(PI-\d+)" data-status="([A-Z]+)">/g)].map((m) => m[1]);
    assert.deepEqual(listed, open.slice().reverse(), 'the 10 newest, newest first');
    assert.match(payments, /class="num share"[^>]*><span class="muted" title="Known once the payment is paid\.">/);
    assert.match(payments, /Page 1 of 2 · 11/);
    assert.ok(payments.includes(`href="${path}?payments=2#h-seller-payments"`));
    const second = section((await viewer.get(`${path}?payments=2`)).html, 'h-seller-payments');
    assert.deepEqual(
      [...second.matchAll(/<tr id="payment-(PI-\d+)"/g)].map((m) => m[1]),
      [paid],
    );
    assert.equal((await viewer.get(`${path}?payments=0`)).status, 400);
  });

  test('a viewer sees the activity and payouts but no form, and every pay-out POST is 403', async () => {
    const seller = await createSeller(t, sk, { name: 'Viewed stall', phone: '+22236000205' });
    await splitPayment(t, sk, seller.id, 2_000, 1_000);
    const path = `${SELLERS}/${seller.id}`;
    const page = await viewer.get(path);
    assert.equal(page.status, 200);
    assert.match(page.html, /id="seller-activity"/);
    assert.match(page.html, /id="h-seller-payouts"/);
    assert.doesNotMatch(page.html, /id="pay-out-form"|id="seller-form"/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await viewer.get('/dashboard')).html)?.[1] ?? '';
    for (const action of [`${path}/payouts/review`, `${path}/payouts`]) {
      const answer = await viewer.post(action, { _csrf: csrf, _idem: 'viewer-try-1', amount: '1' });
      assert.equal(answer.status, 403, action);
    }
    assert.deepEqual(await sellerPayouts(t, seller.id), []);
  });

  test('balance.read draws the balances, activity, payouts and statements: support sees none, finance all', async () => {
    const seller = await createSeller(t, sk, { name: 'Private stall', phone: '+22236000206' });
    await splitPayment(t, sk, seller.id, 2_000, 1_000);
    const path = `${SELLERS}/${seller.id}`;
    const statement = `${path}/statements/${new Date().toISOString().slice(0, 7)}.csv`;
    const money = /id="balance"|id="h-activity"|id="h-seller-payouts"|id="h-seller-statements"|\/statements\//;
    const support = (await signedIn(t, business.id, 'support')).client;
    const list = await support.get(SELLERS);
    assert.equal(list.status, 200);
    assert.ok(list.html.includes(`id="${seller.id}"`));
    assert.doesNotMatch(list.html, /data-label="Balance"|10\.00\u00a0MRU/);
    const page = await support.get(path);
    assert.equal(page.status, 200);
    assert.match(page.html, /id="h-seller-payments"/);
    // Its payments stay (`payments.read`), the seller's share of each included.
    assert.doesNotMatch(page.html, money);
    assert.equal((await support.get(statement)).status, 403);

    const finance = (await signedIn(t, business.id, 'finance')).client;
    const shown = await finance.get(SELLERS);
    assert.match(new RegExp(`<tr id="${seller.id}">[\\s\\S]*?</tr>`).exec(shown.html)![0], /10\.00\u00a0MRU/);
    const full = await finance.get(path);
    assert.match(full.html, /<p class="figure" id="balance">10\.00\u00a0MRU<\/p>/);
    for (const id of ['seller-activity', 'h-seller-payouts', 'seller-statements']) {
      assert.ok(full.html.includes(`id="${id}"`), id);
    }
    assert.ok(full.html.includes(`href="${statement}"`));
    assert.equal((await finance.get(statement)).status, 200);
  });

  test('in Arabic and French: the sections and the pay out form in the language', async () => {
    const seller = await createSeller(t, sk, { name: 'متجر', phone: '+22236000206' });
    const arabic = (await signedIn(t, business.id)).client;
    assert.equal((await arabic.submit('/dashboard', '/dashboard/preferences', { lang: 'ar' })).status, 303);
    const page = await arabic.get(`${SELLERS}/${seller.id}`);
    assert.match(page.html, /<html lang="ar" dir="rtl">/);
    for (const words of [
      'النشاط',
      'تحويلات البائع',
      'المدفوعات المقسمة مع البائع',
      'كشوف حساب البائع',
      'الدفع للبائع',
      'جدول التحويلات',
    ]) {
      assert.ok(page.html.includes(words), words);
    }
    const french = (await signedIn(t, business.id)).client;
    assert.equal((await french.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' })).status, 303);
    const fr = await french.get(`${SELLERS}/${seller.id}`);
    for (const words of [
      'Activité',
      'Versements au vendeur',
      'Paiements partagés avec le vendeur',
      'Relevés du vendeur',
      'Verser au vendeur',
    ]) {
      assert.ok(fr.html.includes(words), words);
    }
  });
});
