import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { containsPattern } from '../../src/modules/dashboard/queries.js';
import { createIntent } from '../intents/support.js';
import { simulate } from '../orders/support.js';
import { createProduct } from '../products/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient } from './support.js';

describe('dashboard search: labels and references on payments, customers and references on orders', () => {
  let t: TestApp;
  let business: TestBusiness;
  let owner: FormClient;
  let donation: string;
  let rent: string;
  let orderRef: string;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ approveLive: false });
    const sk = business.keys.secretTest;
    donation = (await createIntent(t, sk, { amount: 1_000, label: 'Donation Ramadan 100%' })).referenceNumber;
    rent = (await createIntent(t, sk, { amount: 2_000, label: 'Rent of the shop' })).referenceNumber;
    const product = await createProduct(t, sk, { name: 'Tea', price: 500, status: 'ACTIVE', quantity: 50 });
    const order = await simulate(t, sk, [{ productId: product.id, quantity: 1 }], '+22220000042');
    expectStatus(order, 201);
    orderRef = order.body.data.referenceNumber;
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t?.close());

  test('"Don" finds "Donation …" in any case; a reference is found whole', async () => {
    for (const q of ['Don', 'don', 'RAMADAN']) {
      const page = await owner.get(`/dashboard/payments?q=${encodeURIComponent(q)}`);
      assert.equal(page.status, 200);
      assert.ok(page.html.includes(donation), q);
      assert.ok(!page.html.includes(rent), q);
    }
    const byRef = await owner.get(`/dashboard/payments?q=${rent}`);
    assert.ok(byRef.html.includes(rent) && !byRef.html.includes(donation));
  });

  test('% and _ are taken literally; an empty result says no payment matches, not that there are none', async () => {
    assert.equal(containsPattern('50%_a\\'), '%50\\%\\_a\\\\%');
    const percent = await owner.get(`/dashboard/payments?q=${encodeURIComponent('100%')}`);
    assert.ok(percent.html.includes(donation));
    const wildcard = await owner.get(`/dashboard/payments?q=${encodeURIComponent('%')}`);
    assert.ok(wildcard.html.includes(donation) && !wildcard.html.includes(rent), '% matches only a label holding %');
    const none = await owner.get('/dashboard/payments?q=Nothing+like+this');
    assert.match(none.html, /id="empty">No payment matches these filters\.</);
    assert.doesNotMatch(none.html, /No payments yet/);
    const noStatus = await owner.get('/dashboard/payments?status=REFUNDED');
    assert.match(noStatus.html, /No payment matches these filters\./);
  });

  test('orders are found by reference, customer name or phone; none says no order matches', async () => {
    for (const q of [orderRef, 'aich', '0000042']) {
      const page = await owner.get(`/dashboard/orders?q=${encodeURIComponent(q)}`);
      assert.equal(page.status, 200);
      assert.ok(page.html.includes(orderRef), q);
    }
    const none = await owner.get('/dashboard/orders?q=Zeinebou');
    assert.match(none.html, /id="empty">No order matches these filters\.</);
    const filtered = await owner.get(`/dashboard/orders?q=aich&status=DELIVERED`);
    assert.ok(!filtered.html.includes(orderRef));
  });
});
