import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { signedIn, type FormClient } from './support.js';

const SETTINGS = '/dashboard/settings';

/**
 * Issue 54 item 14: the business's new name reaches its storefront and its customers' order pages
 * ("Demo Shop" stayed after a rename). The shop's name follows the business's, unless the business
 * gives its shop a name of its own in Settings; emptying that field gives it back the business's.
 */
describe("the shop's name: the business's, or its own from Settings (issue 54)", () => {
  let t: TestApp;
  let business: TestBusiness;
  let client: FormClient;
  let orderRef: string;

  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000',
      },
    });
    business = await t.createBusiness({ name: 'Demo Shop', approveLive: false });
    const wallet = { phone: '+22245000654', pin: '2468' };
    expectStatus(await t.admin('POST', '/wallets', { ...wallet, balance: 100_000, environment: 'test' }), 201);
    const product = await createProduct(t, business.keys.secretTest, { name: 'Thé', price: 1500, status: 'ACTIVE' });
    const placed = await t.request('POST', `/storefront/shops/${business.shopId}/orders`, {
      body: { items: [{ productId: product.id, quantity: 1 }], customerName: 'Aicha', ...wallet },
    });
    expectStatus(placed, 201);
    orderRef = placed.body.data.orderRef;
    ({ client } = await signedIn(t, business.id));
  });
  afterAll(() => t?.close());

  /** The name the storefront page, its API and the order page (placed before any rename) show. */
  async function shownNames() {
    const storefront = await t.request('GET', `/s/${business.shopId}`);
    const api = await t.request('GET', `/storefront/shops/${business.shopId}`);
    const order = await t.request('GET', `/o/${orderRef}`);
    const orderApi = await t.request('GET', `/storefront/orders/${orderRef}`);
    return {
      storefront: /<h1 id="shop-name"><bdi>([^<]*)<\/bdi>/.exec(storefront.text)?.[1],
      api: api.body.data.shopName as string,
      order: /<a id="back-to-shop"[^>]*>[\s\S]*?<bdi>([^<]*)<\/bdi>/.exec(order.text)?.[1],
      orderApi: orderApi.body.data.shopName as string,
      orderPage: order.text,
    };
  }

  const settingsEntries = () =>
    t.runtime.db
      .selectFrom('audit_log')
      .select('details')
      .where('business_id', '=', business.id)
      .where('action', '=', 'settings.updated')
      .orderBy('id')
      .execute();

  test('renaming the business in Settings renames its storefront and order pages', async () => {
    const before = await shownNames();
    assert.equal(before.storefront, 'Demo Shop');
    assert.equal(before.order, 'Demo Shop');

    const renamed = await client.submit(SETTINGS, `${SETTINGS}/business`, { name: 'Boutique Atar', shopName: '' });
    assert.equal(renamed.location, `${SETTINGS}?notice=done`);
    const after = await shownNames();
    assert.equal(after.storefront, 'Boutique Atar');
    assert.equal(after.api, 'Boutique Atar');
    assert.equal(after.order, 'Boutique Atar');
    assert.equal(after.orderApi, 'Boutique Atar');
    assert.doesNotMatch(after.orderPage, /Demo Shop/);
    // The live shop follows too: both of the business's shops carry the name.
    const shops = await t.runtime.db
      .selectFrom('shops')
      .select(['environment', 'name', 'own_name'])
      .where('business_id', '=', business.id)
      .orderBy('environment')
      .execute();
    assert.deepEqual(shops, [
      { environment: 'live', name: 'Boutique Atar', own_name: false },
      { environment: 'test', name: 'Boutique Atar', own_name: false },
    ]);
  });

  test("a shop name of its own stays through the business's renames; emptied, the shop takes the business's again", async () => {
    const own = await client.submit(SETTINGS, `${SETTINGS}/business`, {
      name: 'Boutique Atar',
      shopName: '  Ksar Market  ',
    });
    assert.equal(own.location, `${SETTINGS}?notice=done`);
    assert.equal((await shownNames()).storefront, 'Ksar Market');
    const page = await client.get(SETTINGS);
    assert.match(page.html, /<input id="shop-name" name="shopName" maxlength="200" value="Ksar Market"/);
    // Settings show the storefront's address (the dashboard's mode: the sandbox), to copy and share.
    assert.match(
      page.html,
      new RegExp(`<input id="storefront-url" readonly dir="ltr" value="http://[^"]+/s/${business.shopId}"`),
    );
    assert.match(page.html, /id="storefront-url-share" href="https:\/\/wa\.me\/\?text=Ksar%20Market%0Ahttp/);

    await client.submit(SETTINGS, `${SETTINGS}/business`, { name: 'Atar & fils', shopName: 'Ksar Market' });
    const kept = await shownNames();
    assert.equal(kept.storefront, 'Ksar Market');
    assert.equal(kept.order, 'Ksar Market');

    await client.submit(SETTINGS, `${SETTINGS}/business`, { name: 'Atar & fils', shopName: ' ' });
    const back = await shownNames();
    assert.equal(back.storefront, 'Atar &amp; fils');
    assert.equal(back.orderApi, 'Atar & fils');
    assert.match((await client.get(SETTINGS)).html, /<input id="shop-name" name="shopName" maxlength="200" value=""/);

    // Each entry names what it changed; the first test's rename changed the name alone.
    assert.deepEqual(
      (await settingsEntries()).map((entry) => entry.details),
      [{ changed: ['name'] }, { changed: ['shopName'] }, { changed: ['name'] }, { changed: ['shopName'] }],
    );
  });

  test('a shop name too long is refused and changes nothing', async () => {
    const refused = await client.submit(SETTINGS, `${SETTINGS}/business`, {
      name: 'Atar & fils',
      shopName: 'x'.repeat(201),
    });
    assert.equal(refused.location, `${SETTINGS}?error=VALIDATION_ERROR`);
    assert.equal((await shownNames()).orderApi, 'Atar & fils');
  });
});
