import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct, PRODUCTS, write } from '../products/support.js';
import { allBalanceTransactions, assertBalanceExplained, fold } from '../payments/support.js';
import { createSeller, patchSeller, SELLERS } from '../sellers/support.js';
import { ledgerIsSound, merchantBalance, orderAction, postingsOf, setFeePlan, simulate } from './support.js';

/**
 * Issue 52 item 2 (decision 081): a product may belong to a seller; an order's lines settle to
 * their products' sellers, less each seller's commission, in the order's one payment, and every
 * return takes back in proportion. The figures are docs/payments.md's worked example (three
 * stalls, one cart, one partial refund): provider fee 1 %, TOF 5 %, no payer fee.
 */

async function sellerBalance(t: TestApp, key: string, id: string): Promise<number> {
  const response = await t.request('GET', `${SELLERS}/${id}/balance`, { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

describe('products of sellers, orders split (issue 52, decision 081)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let spices: { id: string };
  let couscous: { id: string };
  let mint: { id: string };
  let products: Record<string, { id: string }>;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' } });
    business = await t.createBusiness({ name: 'Marché de la Capitale', approveLive: true });
    sk = business.keys.secretTest;
    await setFeePlan(t, business.id, { providerBps: 100, payerFee: 0, tofBps: 500 });
    spices = await createSeller(t, sk, { name: 'Épices Fatimetou', phone: '+22236000101', commissionBps: 1_000 });
    couscous = await createSeller(t, sk, { name: 'Couscous Mariem', phone: '+22236000102', commissionBps: 500 });
    mint = await createSeller(t, sk, { name: 'Menthe Sidi', phone: '+22236000103' });
    const product = (name: string, price: number, seller?: string) =>
      createProduct(t, sk, { name, price, quantity: 1_000, status: 'ACTIVE', ...(seller ? { seller } : {}) });
    products = {
      cumin: await product('Cumin', 1_500, spices.id),
      couscous: await product('Couscous', 2_475, couscous.id),
      mint: await product('Menthe', 1_200, mint.id),
      bag: await product('Sac du marché', 800),
    };
  });
  afterAll(() => t.close());

  const cart = () => [
    { productId: products.cumin!.id, quantity: 2 },
    { productId: products.couscous!.id, quantity: 1 },
    { productId: products.mint!.id, quantity: 1 },
    { productId: products.bag!.id, quantity: 1 },
  ];

  describe('a product names its seller', () => {
    test('create, get, list and PATCH carry `seller`; null detaches; a publishable key does not see it', async () => {
      const made = await createProduct(t, sk, { name: 'Dattes', price: 900, status: 'ACTIVE', seller: spices.id });
      assert.equal(made.seller, spices.id);
      const got = await t.request('GET', `${PRODUCTS}/${made.id}`, { key: sk });
      assert.equal(got.body.data.seller, spices.id);
      const listed = await t.request('GET', `${PRODUCTS}?status=ALL&limit=100`, { key: sk });
      assert.equal(listed.body.data.items.find((p: { id: string }) => p.id === made.id).seller, spices.id);
      const browser = await t.request('GET', `${PRODUCTS}/${made.id}`, { key: business.keys.publishableTest });
      assert.equal(browser.body.data.seller, null);
      const moved = await write(t, sk, 'PATCH', `/${made.id}`, { seller: mint.id });
      expectStatus(moved, 200);
      assert.equal(moved.body.data.seller, mint.id);
      const untouched = await write(t, sk, 'PATCH', `/${made.id}`, { price: 950 });
      assert.equal(untouched.body.data.seller, mint.id, 'a PATCH without seller keeps it');
      const detached = await write(t, sk, 'PATCH', `/${made.id}`, { seller: null });
      assert.equal(detached.body.data.seller, null);
    });

    test("unknown, another business's, the other environment's or a DISABLED seller: refused, nothing written", async () => {
      const other = await t.createBusiness({ name: 'Autre marché' });
      const foreign = await createSeller(t, other.keys.secretTest);
      const live = await createSeller(t, business.keys.secretLive);
      const off = await createSeller(t, sk, { name: 'Stall fermé' });
      expectStatus(await patchSeller(t, sk, off.id, { status: 'DISABLED' }), 200);
      const count = async () =>
        Number(
          (
            await t.runtime.db
              .selectFrom('products')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('business_id', '=', business.id)
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await count();
      const create = (seller: string) =>
        t.request('POST', PRODUCTS, { key: sk, idempotencyKey: true, body: { name: 'X', price: 100, seller } });
      expectError(await create('SL-0000000000000000'), 404, 'SELLER_NOT_FOUND');
      const response = await create(foreign.id);
      expectError(response, 404, 'SELLER_NOT_FOUND');
      assert.match(response.body.error.message, /body\.seller/);
      expectError(await create(live.id), 403, 'SANDBOX_MISMATCH');
      expectError(await create(off.id), 409, 'SELLER_DISABLED');
      assert.equal(await count(), before);
      const kept = await createProduct(t, sk, { name: 'Y', price: 100 });
      expectError(await write(t, sk, 'PATCH', `/${kept.id}`, { seller: off.id }), 409, 'SELLER_DISABLED');
      expectError(
        await write(t, sk, 'PUT', `/${kept.id}`, { name: 'Y', price: 100, seller: live.id }),
        403,
        'SANDBOX_MISMATCH',
      );
      const after = await t.request('GET', `${PRODUCTS}/${kept.id}`, { key: sk });
      assert.equal(after.body.data.seller, null);
    });
  });

  describe('a cart from three stalls', () => {
    test('settles to three sellers in one payment; a partial refund, then the rest, reverse it exactly', async () => {
      const merchantBefore = await merchantBalance(t, sk);
      const placed = await simulate(t, sk, cart());
      expectStatus(placed, 201);
      const order = placed.body.data;
      // 2 × 15.00 + 24.75 + 12.00 + 8.00 = 74.75 MRU; the provider fee (1 %) is 0.75, borne by the business.
      assert.equal(order.totalAmount, 7_475);
      assert.equal(order.commission.provider_ttc, 75);
      // Each stall: its lines less its commission (10 %, 5 %, 0 %), rounded down.
      assert.deepEqual(order.splits, [
        { seller: spices.id, gross: 2_700, fee: 0, net: 2_700 },
        { seller: couscous.id, gross: 2_351, fee: 0, net: 2_351 },
        { seller: mint.id, gross: 1_200, fee: 0, net: 1_200 },
      ]);
      const got = await t.request('GET', `/api/v1/dev/store/orders/${order.referenceNumber}`, { key: sk });
      assert.deepEqual(got.body.data.splits, order.splits);
      // The business keeps the bag, the commissions, less the fee: 7475 − 75 − 6251 = 1149.
      assert.equal(await merchantBalance(t, sk), merchantBefore + 1_149);
      assert.equal(await sellerBalance(t, sk, spices.id), 2_700);
      assert.equal(await sellerBalance(t, sk, couscous.id), 2_351);
      assert.equal(await sellerBalance(t, sk, mint.id), 1_200);
      // One ledger transaction for the whole cart.
      const postings = await postingsOf(t, order.referenceNumber);
      assert.equal(new Set(postings.map((p) => p.transaction_id)).size, 1);
      assert.deepEqual(
        postings.filter((p) => p.account === 'seller').map((p) => [p.owner_id, Number(p.amount)]),
        [
          [spices.id, 2_700],
          [couscous.id, 2_351],
          [mint.id, 1_200],
        ],
      );
      const payment = await t.runtime.db
        .selectFrom('payments')
        .select('settlement')
        .where('order_id', '=', (await orderRow(order.referenceNumber)).id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        payment.settlement.filter((line) => line.account === 'seller').map((line) => line.seller),
        [spices.id, couscous.id, mint.id],
      );

      // A refund of 30.00 MRU: each seller gives back ceil(net × 3000 / 7475).
      const refunded = await orderAction(t, sk, `/${order.referenceNumber}/refund`, { amount: 3_000 });
      expectStatus(refunded, 200);
      assert.equal(await sellerBalance(t, sk, spices.id), 2_700 - 1_084);
      assert.equal(await sellerBalance(t, sk, couscous.id), 2_351 - 944);
      assert.equal(await sellerBalance(t, sk, mint.id), 1_200 - 482);
      await ledgerIsSound(t);
      // The rest: every seller's share is back, exactly.
      expectStatus(await orderAction(t, sk, `/${order.referenceNumber}/refund`, {}), 200);
      for (const seller of [spices, couscous, mint]) assert.equal(await sellerBalance(t, sk, seller.id), 0);
      // Each stall's own balance transactions tell the same story: its share, then what each refund took back.
      const spicesMoves = await allBalanceTransactions(t, sk, `&seller=${spices.id}`);
      assert.deepEqual(
        spicesMoves.map((move: { type: string; net: number; seller: string }) => [move.type, move.net, move.seller]),
        [
          ['order_refund', -(2_700 - 1_084), spices.id],
          ['order_refund', -1_084, spices.id],
          ['order_payment', 2_700, spices.id],
        ],
      );
      assert.equal(await merchantBalance(t, sk), merchantBefore);
      await ledgerIsSound(t);
      await fold(t);
      await assertBalanceExplained(t, sk);
    });

    test('partial refunds of odd amounts, then a cancel of another: every share comes back exactly', async () => {
      const before = await Promise.all([spices, couscous, mint].map((s) => sellerBalance(t, sk, s.id)));
      const order = (await simulate(t, sk, cart())).body.data;
      for (const amount of [1_001, 7, 2_999]) {
        expectStatus(await orderAction(t, sk, `/${order.referenceNumber}/refund`, { amount }), 200);
      }
      expectStatus(await orderAction(t, sk, `/${order.referenceNumber}/refund`, {}), 200);
      const cancelled = (await simulate(t, sk, cart())).body.data;
      expectStatus(await orderAction(t, sk, `/${cancelled.referenceNumber}/cancel`, { reason: 'closed' }), 200);
      const after = await Promise.all([spices, couscous, mint].map((s) => sellerBalance(t, sk, s.id)));
      assert.deepEqual(after, before);
      await ledgerIsSound(t);
    });

    test('a lower total, then a higher one, then a full refund: no seller gives back more than its share', async () => {
      const before = await Promise.all([spices, couscous, mint].map((s) => sellerBalance(t, sk, s.id)));
      const ref = (await simulate(t, sk, cart())).body.data.referenceNumber;
      const modify = async (items: { productId: string; quantity: number }[]) => {
        expectStatus(await orderAction(t, sk, `/${ref}/propose-modification`, { items }), 200);
        expectStatus(await orderAction(t, sk, `/${ref}/modification/accept`), 200);
      };
      // Down to the bag and the mint (a return), then twice the whole cart (a charge: the rise is the business's).
      await modify(cart().slice(2));
      await modify(cart().map((item) => ({ ...item, quantity: item.quantity * 2 })));
      expectStatus(await orderAction(t, sk, `/${ref}/refund`, {}), 200);
      const after = await Promise.all([spices, couscous, mint].map((s) => sellerBalance(t, sk, s.id)));
      assert.deepEqual(after, before);
      await ledgerIsSound(t);
    });

    test("a DISABLED seller takes no new split: its lines stay the business's", async () => {
      const stall = await createSeller(t, sk, { name: 'Stall 7', phone: '+22236000107' });
      const honey = await createProduct(t, sk, {
        name: 'Miel',
        price: 3_000,
        quantity: 10,
        status: 'ACTIVE',
        seller: stall.id,
      });
      expectStatus(await patchSeller(t, sk, stall.id, { status: 'DISABLED' }), 200);
      const order = (await simulate(t, sk, [{ productId: honey.id, quantity: 1 }, ...cart().slice(2)])).body.data;
      assert.deepEqual(
        order.splits.map((s: { seller: string }) => s.seller),
        [mint.id],
      );
      assert.equal(await sellerBalance(t, sk, stall.id), 0);
      const plain = (await simulate(t, sk, [{ productId: products.bag!.id, quantity: 1 }])).body.data;
      assert.equal('splits' in plain, false, 'an order without sellers shows no splits');
      await ledgerIsSound(t);
    });
  });

  test('the storefront splits as orders/simulate does', async () => {
    const customer = { phone: '+22241000052', pin: '4321' };
    expectStatus(await t.admin('POST', '/wallets', { ...customer, balance: 100_000, environment: 'test' }), 201);
    const before = await sellerBalance(t, sk, mint.id);
    const placed = await t.request('POST', `/storefront/shops/${business.shopId}/orders`, {
      body: { items: [{ productId: products.mint!.id, quantity: 2 }], customerName: 'Mariem', ...customer },
    });
    expectStatus(placed, 201);
    // The whole cart is a stall's that the business keeps nothing of, and the business bears the
    // fee (0.24): its line cannot go below zero, so the seller bears what it leaves short, as a fee.
    assert.equal(await sellerBalance(t, sk, mint.id), before + 2_376);
    const got = await t.request('GET', `/api/v1/dev/store/orders/${placed.body.data.referenceNumber}`, { key: sk });
    assert.deepEqual(got.body.data.splits, [{ seller: mint.id, gross: 2_400, fee: 24, net: 2_376 }]);
    await ledgerIsSound(t);
  });

  const orderRow = (reference: string) =>
    t.runtime.db.selectFrom('orders').select('id').where('reference_number', '=', reference).executeTakeFirstOrThrow();
});
