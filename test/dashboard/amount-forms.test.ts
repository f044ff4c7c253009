import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { freshPhone, simulate } from '../orders/support.js';
import { createProduct } from '../products/support.js';
import { earn, newPhone } from '../payouts/support.js';
import { createSeller } from '../sellers/support.js';
import { act, createIntent } from '../intents/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient } from './support.js';

/**
 * Issue 54 item 12: an amount typed as the French dashboard shows it ("1 250,50", with a space or the
 * narrow no-break space it writes) is read by every form: a new payment, a payment's and an order's
 * refund, a product's price, a payout, a link, a seller's payout.
 */
const TYPED = '1 250,50';
const SHOWN = '1\u202f250,50\u00a0MRU';

describe('every dashboard form reads an amount as the dashboard shows it (issue 54, item 12)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let owner: FormClient;
  const db = () => t.runtime.db;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ approveLive: false });
    sk = business.keys.secretTest;
    await earn(t, sk, 1_000_000);
    owner = (await signedIn(t, business.id)).client;
    assert.equal((await owner.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' })).status, 303);
  });
  afterAll(() => t?.close());

  test('a new payment of "1 250,50"', async () => {
    const made = await owner.submit('/dashboard/payments/new', '/dashboard/payments', {
      amountType: 'FIXED',
      amount: TYPED,
      label: 'Typed as shown',
    });
    assert.equal(made.status, 303, made.html.slice(0, 500));
    const row = await db()
      .selectFrom('payment_intents')
      .select('amount')
      .where('business_id', '=', business.id)
      .where('label', '=', 'Typed as shown')
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.amount), 125_050);
  });

  test('a payment\'s refund of "1 250,50", and of the amount as the page shows it', async () => {
    const intent = await createIntent(t, sk, { amount: 300_000 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    const path = `/dashboard/payments/${intent.referenceNumber}`;
    assert.equal((await owner.submit(path, `${path}/refund`, { amount: TYPED })).status, 303);
    assert.equal((await owner.submit(path, `${path}/refund`, { amount: SHOWN })).status, 303);
    const row = await db()
      .selectFrom('payment_intents')
      .select('total_amount_refunded')
      .where('reference_number', '=', intent.referenceNumber)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.total_amount_refunded), 250_100);
  });

  test('a product priced "1 250,50", and an order refunded "1 250,50"', async () => {
    const made = await owner.submit('/dashboard/products/new', '/dashboard/products', {
      name: 'Typed price',
      price: TYPED,
      status: 'ACTIVE',
    });
    assert.equal(made.status, 303, made.html.slice(0, 500));
    const product = await db()
      .selectFrom('products')
      .select('price')
      .where('business_id', '=', business.id)
      .where('name', '=', 'Typed price')
      .executeTakeFirstOrThrow();
    assert.equal(Number(product.price), 125_050);

    const stock = await createProduct(t, sk, { name: 'Tea', price: 200_000, status: 'ACTIVE', quantity: 10 });
    const order = await simulate(t, sk, [{ productId: stock.id, quantity: 1 }], freshPhone());
    expectStatus(order, 201);
    const path = `/dashboard/orders/${order.body.data.referenceNumber}`;
    const refunded = await owner.submit(path, `${path}/refund`, { amount: TYPED });
    assert.equal(refunded.status, 303, refunded.html.slice(0, 500));
    const row = await db()
      .selectFrom('orders')
      .select('total_amount_refunded')
      .where('reference_number', '=', order.body.data.referenceNumber)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.total_amount_refunded), 125_050);
  });

  test('a payout of "1 250,50" reviewed, a link of "1 250,50" made', async () => {
    const reviewed = await owner.submit('/dashboard/payouts/new', '/dashboard/payouts/review', {
      amount: TYPED,
      phone: newPhone(),
    });
    assert.equal(reviewed.status, 200, reviewed.html.slice(0, 500));
    assert.ok(reviewed.html.includes(`id="review-amount">${SHOWN}<`), reviewed.html);

    const link = await owner.submit('/dashboard/links/new', '/dashboard/links', {
      label: 'Typed link',
      amountType: 'FIXED',
      amount: TYPED,
    });
    assert.equal(link.status, 303, link.html.slice(0, 500));
    const row = await db()
      .selectFrom('payment_links')
      .select('amount')
      .where('business_id', '=', business.id)
      .where('label', '=', 'Typed link')
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.amount), 125_050);
  });

  test('a seller paid out "1 250,50"', async () => {
    const seller = await createSeller(t, sk, { name: 'Typed stall', phone: '+22236000254' });
    const intent = await createIntent(t, sk, { amount: 500_000, splits: [{ seller: seller.id, amount: 300_000 }] });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate'), 200);
    const path = `/dashboard/sellers/${seller.id}`;
    const reviewed = await owner.submit(path, `${path}/payouts/review`, { amount: TYPED, description: 'Semaine' });
    assert.equal(reviewed.status, 200, reviewed.html.slice(0, 500));
    assert.ok(reviewed.html.includes(`id="review-amount">${SHOWN}<`), reviewed.html);
  });

  test('what could mean two things is still refused', async () => {
    const refused = await owner.submit('/dashboard/links/new', '/dashboard/links', {
      label: 'Ambiguous',
      amountType: 'FIXED',
      amount: '1,250',
    });
    assert.equal(refused.status, 400);
  });
});
