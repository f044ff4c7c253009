import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { merchantBalance, orderAction, walletBalance } from '../orders/support.js';

describe('live mode end to end (issue 11): a live wallet made by the admin CLI orders from a live shop', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  test('order, merchant workflow, refund and customer cancel move live money; the ledger check passes', async () => {
    const business = await t.createBusiness({ name: 'Live Boutique', approveLive: true });
    const sk = business.keys.secretLive;
    const shop = await t.runtime.db
      .selectFrom('shops')
      .select('id')
      .where('business_id', '=', business.id)
      .where('environment', '=', 'live')
      .executeTakeFirstOrThrow();
    const phone = '+22244556677';
    const created = await adminCli(
      t,
      'wallet',
      'create',
      '--phone',
      phone,
      '--pin',
      '1357',
      '--balance',
      '50000',
      '--env',
      'live',
    );
    assert.equal(created.code, 0, created.stderr);
    const product = await createProduct(t, sk, { name: 'Couscous', price: 3000, quantity: 5, status: 'ACTIVE' });

    // The live storefront shows live products only, with no TEST MODE and no test wallets.
    const catalog = await t.request('GET', `/storefront/shops/${shop.id}`);
    expectStatus(catalog, 200);
    assert.equal(catalog.body.data.sandbox, false);
    assert.deepEqual(catalog.body.data.testWallets, []);
    assert.deepEqual(
      catalog.body.data.items.map((p: { id: string }) => p.id),
      [product.id],
    );
    const page = await t.request('GET', `/s/${shop.id}`);
    expectStatus(page, 200);
    assert.doesNotMatch(page.text, /class="test"/, 'no TEST MODE banner');
    // A sandbox wallet cannot pay in the live shop.
    const sandboxPay = await t.request('POST', `/storefront/shops/${shop.id}/orders`, {
      body: { items: [{ productId: product.id, quantity: 1 }], customerName: 'X', phone: '+22220000001', pin: '1234' },
    });
    expectError(sandboxPay, 401, 'INVALID_PIN');

    const place = () =>
      t.request('POST', `/storefront/shops/${shop.id}/orders`, {
        body: { items: [{ productId: product.id, quantity: 2 }], customerName: 'Oumou', phone, pin: '1357' },
      });
    const first = await place();
    expectStatus(first, 201);
    assert.equal(first.body.data.sandbox, false);
    assert.equal(await walletBalance(t, phone, 'live'), 50_000 - 6000);
    assert.equal(await merchantBalance(t, sk), 6000 - 60);
    const ref = first.body.data.referenceNumber;
    // The merchant's live key sees it and runs the workflow; a refund pays back live money.
    const seen = await t.request('GET', `/api/v1/dev/store/orders/${ref}`, { key: sk });
    assert.equal(seen.body.data.sandbox, false);
    assert.equal(seen.body.data.payment.amountPaid, 6000);
    expectError(
      await t.request('GET', `/api/v1/dev/store/orders/${ref}`, { key: business.keys.secretTest }),
      403,
      'SANDBOX_MISMATCH',
    );
    expectStatus(await orderAction(t, sk, `/${ref}/accept`), 200);
    expectStatus(await orderAction(t, sk, `/${ref}/refund`, { amount: 1000 }), 200);
    assert.equal(await walletBalance(t, phone, 'live'), 50_000 - 5000);

    // The customer cancels a second order from its link.
    const second = await place();
    expectStatus(second, 201);
    const cancelled = await t.request('POST', `/storefront/orders/${second.body.data.orderRef}/cancel`, { body: {} });
    expectStatus(cancelled, 200);
    assert.equal(await walletBalance(t, phone, 'live'), 50_000 - 5000);
    assert.equal((await t.request('GET', `/storefront/shops/${shop.id}`)).body.data.items.length, 1);

    const check = await adminCli(t, 'ledger', 'check');
    assert.equal(check.code, 0, check.stdout + check.stderr);
  });
});
