import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createProduct } from '../products/support.js';
import { walletBalance } from '../orders/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';

const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, any>>;
};
const orderBody = document.paths['/storefront/shops/{shopId}/orders']!.post.requestBody.content['application/json']
  .schema as { properties: { phone: { pattern: string; description: string } } };
const documentedPhone = new RegExp(orderBody.properties.phone.pattern);

/**
 * Decision 056: the storefront order's `phone` takes a Mauritanian number's 8 national digits, as
 * its description promises; openapi.json's pattern says so too, so a client (or a proxy) that
 * checks requests against the document sends them. Every response is checked against the
 * document by the harness.
 */
describe("the storefront order's wallet phone", () => {
  let t: TestApp;
  let business: TestBusiness;
  let tea: { id: string };
  const wallet = { phone: '+22241000077', pin: '4321' };
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness({ name: 'Phone shop' });
    tea = await createProduct(t, business.keys.secretTest, {
      name: 'Tea',
      price: 1000,
      quantity: 20,
      status: 'ACTIVE',
    });
    expectStatus(await t.admin('POST', '/wallets', { ...wallet, balance: 50_000, environment: 'test' }), 201);
  });
  afterAll(() => t.close());

  const place = (phone: string) =>
    t.request('POST', `/storefront/shops/${business.shopId}/orders?mode=test`, {
      body: { items: [{ productId: tea.id, quantity: 1 }], customerName: 'Mariem', phone, pin: wallet.pin },
    });

  test('openapi.json documents the 8 national digits its description promises', () => {
    assert.match(orderBody.properties.phone.description, /8 national digits/);
    for (const phone of ['41000077', '+22241000077', '+33612345678']) assert.ok(documentedPhone.test(phone), phone);
    for (const phone of ['4100007', '410000777', '41 00 00 77', '0041000077x', '']) {
      assert.ok(!documentedPhone.test(phone), phone);
    }
  });

  test('an 8-digit national phone places the order on its wallet', async () => {
    const before = await walletBalance(t, wallet.phone);
    const placed = await place('41000077');
    expectStatus(placed, 201);
    assert.equal(placed.body.data.status, 'NEW');
    assert.ok(before - (await walletBalance(t, wallet.phone)) >= 1000, 'the wallet behind +222 41000077 paid');
  });

  test('a phone that reads as no wallet phone is refused on body.phone, whatever its shape', async () => {
    for (const phone of ['12345678', '4100007', '+0041000077', 'not a phone']) {
      const refused = await place(phone);
      expectError(refused, 400, 'VALIDATION_ERROR');
      assert.equal(refused.body.error.details[0].field, 'body.phone', `${phone}: ${refused.text}`);
    }
  });
});
