import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct } from '../products/support.js';
import { signedIn } from './support.js';

const SETTINGS = '/dashboard/settings';
const CONTACT = '/dashboard/settings/contact';

/** The id of the message an input is described by when it is refused, and that message. */
function fieldError(html: string, inputId: string): string | undefined {
  const input = new RegExp(`<(?:input|textarea)[^>]*id="${inputId}"[^>]*>`).exec(html)?.[0];
  assert(input, `no field #${inputId}`);
  const described = /aria-describedby="([^"]+)"/.exec(input)?.[1];
  if (!described || !/aria-invalid="true"/.test(input)) return undefined;
  return new RegExp(`class="error field-error" id="${described}">([^<]*)<`).exec(html)?.[1];
}

describe("the shop's contact: entered in the dashboard's settings, shown on the customers' order pages (issue 38)", () => {
  let t: TestApp;
  let business: TestBusiness;
  let orderPage: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ name: 'Souk Nour' });
    const wallet = { phone: '+22245000778', pin: '1357' };
    expectStatus(await t.admin('POST', '/wallets', { ...wallet, balance: 1_000_000, environment: 'test' }), 201);
    const tea = await createProduct(t, business.keys.secretTest, { name: 'Thé', price: 1500, status: 'ACTIVE' });
    const placed = await t.request('POST', `/storefront/shops/${business.shopId}/orders`, {
      body: { items: [{ productId: tea.id, quantity: 1 }], customerName: 'Aicha', ...wallet },
    });
    expectStatus(placed, 201);
    orderPage = `/o/${placed.body.data.orderRef}`;
  });
  afterAll(() => t?.close());

  test('an order page without a contact shows none; once an owner enters one, every language shows it', async () => {
    const before = await t.request('GET', orderPage);
    assert.equal(before.status, 200);
    assert.doesNotMatch(before.text, /id="shop-contact"|id="shop-delivers"/);

    const { client } = await signedIn(t, business.id);
    const saved = await client.submit(SETTINGS, CONTACT, {
      phone: '22 12 34 56',
      email: 'souk@example.com',
      pickupAddress: 'Marché Capitale, étal 12 <b>',
      delivers: 'yes',
    });
    assert.equal(saved.status, 303, saved.html.slice(0, 300));
    const settings = await client.get(SETTINGS);
    // A local number is kept in E.164, as the wallets are.
    assert.match(settings.html, /id="contact-phone"[^>]*value="\+22222123456"/);
    assert.match(settings.html, /id="contact-delivers"[^>]* checked/);

    for (const [lang, phoneLabel, deliversText] of [
      ['en', 'Phone', 'also delivers'],
      ['fr', 'Téléphone', 'livre aussi'],
      ['ar', 'الهاتف', 'يوصّل'],
    ] as const) {
      const page = await t.request('GET', `${orderPage}?lang=${lang}`);
      assert.equal(page.status, 200);
      assert.match(page.text, new RegExp(`<dt>${phoneLabel}</dt><dd><a id="shop-phone" href="tel:\\+22222123456">`));
      assert.match(page.text, /<a id="shop-email" href="mailto:souk@example.com">/);
      assert.match(page.text, /id="shop-pickup"><bdi>Marché Capitale, étal 12 &lt;b&gt;<\/bdi>/);
      assert.match(page.text, new RegExp(`id="shop-delivers">[^\\n]*${deliversText}`));
    }

    // Emptied fields are gone from the order page.
    const cleared = await client.submit(SETTINGS, CONTACT, { phone: '', email: '', pickupAddress: '' });
    assert.equal(cleared.status, 303);
    const after = await t.request('GET', orderPage);
    assert.doesNotMatch(after.text, /id="shop-contact"|id="shop-delivers"/);
  });

  test('a wrong phone and a wrong email are refused each on its field, with what was typed kept; nothing is saved', async () => {
    const { client } = await signedIn(t, business.id);
    const refused = await client.submit(SETTINGS, CONTACT, {
      phone: '12',
      email: 'not an address',
      pickupAddress: 'Ksar',
    });
    assert.equal(refused.status, 400);
    assert.equal(
      fieldError(refused.html, 'contact-phone'),
      'Enter a phone number, such as 22 12 34 56 or +222 22 12 34 56.',
    );
    assert.equal(fieldError(refused.html, 'contact-email'), 'Enter an email address, such as shop@example.com.');
    assert.equal(fieldError(refused.html, 'contact-pickup'), undefined);
    assert.match(refused.html, /id="contact-phone"[^>]*value="12"/);
    assert.match(refused.html, />Ksar<\/textarea>/);
    const page = await t.request('GET', orderPage);
    assert.doesNotMatch(page.text, /Ksar/);
  });

  test('a viewer sees the contact but cannot change it', async () => {
    const { client } = await signedIn(t, business.id, 'viewer');
    const settings = await client.get(SETTINGS);
    assert.match(settings.html, /id="contact-phone"[^>]* disabled/);
    assert.doesNotMatch(settings.html, /id="save-contact"/);
    const refused = await client.post(CONTACT, {
      _csrf: /name="_csrf" value="([^"]+)"/.exec(settings.html)![1]!,
      _idem: 'viewer-contact-1',
      phone: '22123456',
      email: '',
      pickupAddress: '',
    });
    assert.equal(refused.status, 403);
  });
});
