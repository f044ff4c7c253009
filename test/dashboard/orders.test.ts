import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { freshPhone, ledgerIsSound, simulate, walletBalance } from '../orders/support.js';
import { createProduct } from '../products/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { hiddenFields, signedIn } from './support.js';

const ORDERS = '/dashboard/orders';

describe('dashboard orders: list, an order page, its workflow, refunds and modifications', () => {
  let t: TestApp;
  let business: TestBusiness;
  let productId: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ approveLive: false });
    const product = await createProduct(t, business.keys.secretTest, {
      name: 'Couscous',
      price: 1_000,
      status: 'ACTIVE',
      quantity: 1000,
    });
    productId = product.id;
  });
  afterAll(() => t?.close());

  async function newOrder(quantity = 2, phone = freshPhone()): Promise<string> {
    const response = await simulate(t, business.keys.secretTest, [{ productId, quantity }], phone);
    expectStatus(response, 201);
    return response.body.data.referenceNumber as string;
  }

  const orderRow = (ref: string) =>
    t.runtime.db.selectFrom('orders').selectAll().where('reference_number', '=', ref).executeTakeFirstOrThrow();

  test('the list filters by status; the page shows lines, customer, payment and only the allowed steps', async () => {
    const ref = await newOrder();
    const { client } = await signedIn(t, business.id);
    const list = await client.get(`${ORDERS}?status=NEW`);
    assert.equal(list.status, 200);
    assert.match(list.html, new RegExp(ref));
    assert.doesNotMatch((await client.get(`${ORDERS}?status=DELIVERED`)).html, new RegExp(ref));
    const page = await client.get(`${ORDERS}/${ref}`);
    assert.equal(page.status, 200);
    assert.match(page.html, /Couscous/);
    assert.match(page.html, /id="customer-name">Aicha</);
    assert.match(page.html, /id="order-total">20\.00\sMRU/);
    for (const shown of ['accept', 'cancel', 'refund', 'propose-modification'])
      assert.ok(page.html.includes(`action="${ORDERS}/${ref}/${shown}"`), shown);
    for (const hidden of ['ready', 'pickup', 'deliver'])
      assert.ok(!page.html.includes(`action="${ORDERS}/${ref}/${hidden}"`), hidden);
    assert.equal((await client.get(`${ORDERS}/ORD-nope`)).status, 404);
  });

  test('an owner walks an order through accept, ready, pickup, deliver; a double click steps once; a wrong step is refused', async () => {
    const ref = await newOrder();
    const { client } = await signedIn(t, business.id);
    const path = `${ORDERS}/${ref}`;
    const accept = hiddenFields((await client.get(path)).html, `${path}/accept`);
    const answers = await Promise.all([client.post(`${path}/accept`, accept), client.post(`${path}/accept`, accept)]);
    assert.deepEqual(answers.map((a) => a.location).sort(), [`${path}?notice=already`, `${path}?notice=done`]);
    assert.equal((await orderRow(ref)).status, 'PREPARING');
    // A step the state does not allow, sent with a form token of the page: the state table refuses it.
    const stale = hiddenFields((await client.get(path)).html, `${path}/ready`);
    const wrong = await client.post(`${path}/deliver`, stale);
    assert.equal(wrong.location, `${path}?error=ORDER_INVALID_TRANSITION`);
    for (const [step, status] of [
      ['ready', 'READY'],
      ['pickup', 'PICKED_UP'],
      ['deliver', 'DELIVERED'],
    ] as const) {
      const answer = await client.submit(path, `${path}/${step}`);
      assert.equal(answer.location, `${path}?notice=done`, step);
      assert.equal((await orderRow(ref)).status, status);
    }
    const history = (await orderRow(ref)).history.map((entry) => entry.status);
    assert.deepEqual(history.slice(-4), ['PREPARING', 'READY', 'PICKED_UP', 'DELIVERED']);
  });

  test('cancel needs a reason and refunds the paid order once; a partial refund with a reason', async () => {
    const phone = freshPhone();
    const ref = await newOrder(2, phone);
    const { client } = await signedIn(t, business.id);
    const path = `${ORDERS}/${ref}`;
    const before = await walletBalance(t, phone);
    const partial = await client.submit(path, `${path}/refund`, { amount: '5', reason: 'one bag torn' });
    assert.equal(partial.location, `${path}?notice=done`);
    let row = await orderRow(ref);
    assert.equal(row.total_amount_refunded, 500);
    assert.equal(row.refunds[0]?.reason, 'one bag torn');
    const twice = { ...hiddenFields((await client.get(path)).html, `${path}/refund`), amount: '1' };
    const raced = await Promise.all([client.post(`${path}/refund`, twice), client.post(`${path}/refund`, twice)]);
    assert.deepEqual(raced.map((a) => a.location).sort(), [`${path}?notice=already`, `${path}?notice=done`]);
    assert.equal((await orderRow(ref)).total_amount_refunded, 600, 'a double click refunds once');
    const tooMuch = await client.submit(path, `${path}/refund`, { amount: '500' });
    assert.equal(tooMuch.location, `${path}?error=REFUND_AMOUNT_INVALID`);
    const garbled = await client.submit(path, `${path}/refund`, { amount: 'five' });
    assert.equal(garbled.location, `${path}?error=VALIDATION_ERROR`);

    const ref2 = await newOrder(1, phone);
    const path2 = `${ORDERS}/${ref2}`;
    const noReason = await client.submit(path2, `${path2}/cancel`, { reason: '  ' });
    assert.equal(noReason.location, `${path2}?error=VALIDATION_ERROR`);
    assert.equal((await orderRow(ref2)).status, 'NEW');
    const form = { ...hiddenFields((await client.get(path2)).html, `${path2}/cancel`), reason: 'out of stock' };
    const answers = await Promise.all([client.post(`${path2}/cancel`, form), client.post(`${path2}/cancel`, form)]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [303, 303],
    );
    row = await orderRow(ref2);
    assert.equal(row.status, 'CANCELLED');
    assert.equal(row.cancellation_reason, 'out of stock');
    assert.equal(row.refunds.length, 1, 'refunded once');
    const page = await client.get(path2);
    assert.match(page.html, /id="cancellation-reason">out of stock</);
    assert.ok(!page.html.includes(`action="${path2}/cancel"`));
    assert.ok((await walletBalance(t, phone)) > before, 'the wallet got money back');
    await ledgerIsSound(t);
  });

  test('an owner proposes a modification from the lines; nothing changes until the customer answers', async () => {
    const ref = await newOrder(2);
    const { client } = await signedIn(t, business.id);
    const path = `${ORDERS}/${ref}`;
    const answer = await client.submit(path, `${path}/propose-modification`, {
      productId: [productId, '', ''],
      variantId: ['', '', ''],
      optionIds: ['', '', ''],
      quantity: ['3', '', ''],
    });
    assert.equal(answer.location, `${path}?notice=done`);
    const row = await orderRow(ref);
    assert.equal(row.total_amount, 2_000);
    assert.equal(row.proposed_modification?.totalAmount, 3_000);
    assert.match((await client.get(path)).html, /id="proposed"/);
    const empty = await client.submit(path, `${path}/propose-modification`, {
      productId: [productId],
      quantity: ['0'],
    });
    assert.equal(empty.status, 400, 'drawn again with the refusal above the lines');
    assert.match(empty.html, /class="error field-error" id="error-items">Keep at least one product in the order\.</);
    const unknown = await client.submit(path, `${path}/propose-modification`, {
      productId: ['prod_nope'],
      quantity: ['1'],
    });
    assert.equal(unknown.status, 404);
    assert.match(unknown.html, /id="error-items">Choose a product of this shop that is on sale\.</);
  });

  test('a viewer sees orders but every step is refused; a form without its CSRF token is refused', async () => {
    const ref = await newOrder();
    const path = `${ORDERS}/${ref}`;
    const owner = await signedIn(t, business.id);
    const viewer = await signedIn(t, business.id, 'viewer');
    const page = await viewer.client.get(path);
    assert.equal(page.status, 200);
    assert.ok(!page.html.includes(`action="${path}/accept"`));
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
    for (const step of ['accept', 'cancel', 'refund', 'propose-modification']) {
      const refused = await viewer.client.post(`${path}/${step}`, {
        _csrf: csrf,
        _idem: 'abcdefghijklmnop4321',
        reason: 'x',
      });
      assert.equal(refused.status, 403, step);
    }
    const { _csrf: _token, ...noCsrf } = hiddenFields((await owner.client.get(path)).html, `${path}/accept`);
    assert.equal((await owner.client.post(`${path}/accept`, noCsrf)).status, 403);
    assert.equal((await orderRow(ref)).status, 'NEW');
  });
});
