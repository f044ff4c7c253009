import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { act, createIntent } from '../intents/support.js';
import { simulate, setFeePlan } from '../orders/support.js';
import { createSeller, patchSeller } from '../sellers/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createUser, FormClient, signedIn } from './support.js';

const PRODUCTS = '/dashboard/products';

/** The seller picker's options as drawn: [value, text, selected]. */
function pickerOptions(html: string): [string, string, boolean][] {
  const select = /<select id="product-seller"[\s\S]*?<\/select>/.exec(html)?.[0];
  assert(select, 'no seller picker');
  return [...select.matchAll(/<option value="([^"]*)"( selected)?>([^<]*)<\/option>/g)].map((m) => [
    m[1]!,
    m[3]!,
    Boolean(m[2]),
  ]);
}

/** The split table's rows as drawn: [seller link, name, gross, fee, net]. */
function splitTable(html: string): string[][] {
  const table = /<table id="split">[\s\S]*?<\/table>/.exec(html)?.[0];
  assert(table, 'no split table');
  return [
    ...table.matchAll(
      /<tr data-seller="[^"]+"><td><a href="([^"]+)">([^<]*)<\/a><\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/g,
    ),
  ].map((m) => m.slice(1, 6).map((cell) => cell.replace(/\u00a0/g, ' ')));
}

describe("dashboard: a payment's split, an order's, and the product form's seller picker (issue 52 item 5)", () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let owner: FormClient;
  let stall: { id: string };
  let closed: { id: string };
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000',
      },
    });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
    await setFeePlan(t, business.id, { providerBps: 100, payerFee: 0 });
    owner = (await signedIn(t, business.id)).client;
    stall = await createSeller(t, sk, { name: 'Épices Fatimetou', phone: '+22236000201', commissionBps: 1_000 });
    closed = await createSeller(t, sk, { name: 'Stall fermé', phone: '+22236000202' });
    expectStatus(await patchSeller(t, sk, closed.id, { status: 'DISABLED' }), 200);
  });
  afterAll(() => t?.close());

  test('the product form picks an ACTIVE seller or none; a disabled one is refused on its field', async () => {
    const blank = await owner.get(`${PRODUCTS}/new`);
    assert.deepEqual(pickerOptions(blank.html), [
      ['', 'None (the business&#39;s own)', true],
      [stall.id, 'Épices Fatimetou', false],
    ]);
    const created = await owner.submit(`${PRODUCTS}/new`, PRODUCTS, {
      status: 'ACTIVE',
      name: 'Cumin',
      price: '15',
      quantity: '100',
      seller: stall.id,
    });
    assert.equal(created.status, 303, created.html.slice(0, 500));
    const id = decodeURIComponent(/\/dashboard\/products\/([^?]+)/.exec(created.location!)![1]!);
    const page = await owner.get(`${PRODUCTS}/${id}`);
    assert.deepEqual(pickerOptions(page.html)[1], [stall.id, 'Épices Fatimetou', true]);
    const refused = await owner.submit(`${PRODUCTS}/${id}`, `${PRODUCTS}/${id}`, {
      status: 'ACTIVE',
      name: 'Cumin',
      price: '15',
      seller: closed.id,
    });
    assert.equal(refused.status, 409, refused.html.slice(0, 500));
    assert.match(refused.html, /This seller cannot take products/);

    // An order of it: the order's page shows the split, the seller linked to its page.
    const order = (await simulate(t, sk, [{ productId: id, quantity: 2 }])).body.data;
    const orderPage = await owner.get(`/dashboard/orders/${order.referenceNumber}`);
    assert.equal(orderPage.status, 200);
    assert.deepEqual(splitTable(orderPage.html), [
      [`/dashboard/sellers/${stall.id}`, 'Épices Fatimetou', '27.00 MRU', '0.00 MRU', '27.00 MRU'],
    ]);
  });

  test("a split intent's payment page shows each seller's gross, fee and net; an unsplit one shows none", async () => {
    const intent = await createIntent(t, sk, {
      amount: 10_000,
      splits: [{ seller: stall.id, bps: 2_500 }],
      feeBearer: 'PROPORTIONAL',
    });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', {}), 200);
    const page = await owner.get(`/dashboard/payments/${intent.referenceNumber}`);
    assert.equal(page.status, 200);
    assert.deepEqual(splitTable(page.html), [
      [`/dashboard/sellers/${stall.id}`, 'Épices Fatimetou', '25.00 MRU', '0.25 MRU', '24.75 MRU'],
    ]);
    // The page's amounts are the business's own, what its balance got: the seller's share is on the split card.
    const amount = (id: string) =>
      new RegExp(`id="${id}">(?:<strong>)?([^<]+)<`).exec(page.html)?.[1]?.replace(/\s/g, ' ');
    assert.equal(amount('amount-gross'), '75.00 MRU');
    assert.equal(amount('amount-net'), '74.25 MRU');
    const user = await createUser(t, business.id);
    const arabic = new FormClient(t);
    assert.equal((await arabic.signIn(user.email, user.password, { lang: 'ar' })).status, 303);
    assert.match((await arabic.get(`/dashboard/payments/${intent.referenceNumber}`)).html, /التقسيم بين البائعين/);
    const plain = await createIntent(t, sk, { amount: 5_000 });
    expectStatus(await act(t, sk, plain.referenceNumber, 'simulate', {}), 200);
    assert.doesNotMatch((await owner.get(`/dashboard/payments/${plain.referenceNumber}`)).html, /id="split"/);
  });
});
