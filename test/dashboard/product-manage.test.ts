import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { multipartBody } from '../support/multipart.js';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { hiddenFields, signedIn, type FormClient } from './support.js';

const PRODUCTS = '/dashboard/products';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

/** The message drawn next to an input, by its aria-describedby. */
function fieldError(html: string, inputId: string): string | undefined {
  const input = new RegExp(`<input[^>]*id="${inputId}"[^>]*>`).exec(html)?.[0];
  assert(input, `no input #${inputId}`);
  if (!/aria-invalid="true"/.test(input)) return undefined;
  const ids = /aria-describedby="([^"]+)"/.exec(input)![1]!.split(' ');
  return ids.map((id) => new RegExp(`class="error field-error" id="${id}">([^<]*)<`).exec(html)?.[1]).find(Boolean);
}

function valueOf(html: string, inputId: string): string {
  const input = new RegExp(`<input[^>]*id="${inputId}"[^>]*>`).exec(html)?.[0];
  assert(input, `no input #${inputId}`);
  return /value="([^"]*)"/.exec(input)?.[1] ?? '';
}

describe('dashboard products: SKU, refusals on the field, delete with confirmation, thumbnails', () => {
  let t: TestApp;
  let business: TestBusiness;
  let owner: FormClient;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ approveLive: false });
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t?.close());

  const productRow = (id: string) =>
    t.runtime.db.selectFrom('products').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  async function create(fields: Record<string, string>): Promise<string> {
    const created = await owner.submit(`${PRODUCTS}/new`, PRODUCTS, { status: 'ACTIVE', ...fields });
    assert.equal(created.status, 303, created.html.slice(0, 500));
    return decodeURIComponent(/\/dashboard\/products\/([^?]+)/.exec(created.location!)![1]!);
  }

  test('the SKU is the API’s externalId: set on create, shown, changed, and refused on its field when taken', async () => {
    const id = await create({ name: 'Thé vert', price: '45', sku: 'TEA-1' });
    assert.equal((await productRow(id)).external_id, 'TEA-1');
    const api = await t.request('GET', '/api/v1/dev/store/products/TEA-1', { key: business.keys.secretTest });
    assert.equal(api.body.data.id, id);
    const page = await owner.get(`${PRODUCTS}/${id}`);
    assert.equal(valueOf(page.html, 'product-sku'), 'TEA-1');
    const list = await owner.get(PRODUCTS);
    assert.match(list.html, /<td class="hide-sm mono">TEA-1<\/td>/);

    const other = await create({ name: 'Café', price: '30', sku: 'COF-1' });
    const taken = await owner.submit(`${PRODUCTS}/${other}`, `${PRODUCTS}/${other}`, {
      name: 'Café arabica',
      price: '32.50',
      status: 'ACTIVE',
      sku: 'TEA-1',
    });
    assert.equal(taken.status, 409);
    assert.equal(fieldError(taken.html, 'product-sku'), 'Another product already has this SKU, or it is too long.');
    assert.equal(valueOf(taken.html, 'product-name'), 'Café arabica', 'what was typed is kept');
    assert.equal(valueOf(taken.html, 'product-price'), '32.50');
    assert.equal((await productRow(other)).name, 'Café', 'nothing was written');

    const cleared = await owner.submit(`${PRODUCTS}/${other}`, `${PRODUCTS}/${other}`, {
      name: 'Café',
      price: '30',
      status: 'ACTIVE',
      sku: '',
    });
    assert.equal(cleared.status, 303);
    assert.equal((await productRow(other)).external_id, null);
  });

  test('a bad price, stock or variant adjustment is refused on its field, every row kept as typed', async () => {
    const typed = {
      name: 'Sandales',
      price: 'cheap',
      status: 'ACTIVE',
      quantity: 'many',
      sku: 'SAN-1',
      variantId: ['', ''],
      variantType: ['SIZE', ''],
      variantLabel: ['42', ''],
      variantAdjustment: ['2,5x', ''],
      variantQuantity: ['3', ''],
    };
    const refused = await owner.submit(`${PRODUCTS}/new`, PRODUCTS, typed);
    assert.equal(refused.status, 400);
    assert.match(refused.html, /role="alert">The form was not saved: check the fields marked below\.</);
    // Every wrong field is marked in the one answer, each with its own text.
    assert.equal(fieldError(refused.html, 'product-price'), 'Enter an amount in MRU, such as 250 or 250.50.');
    assert.equal(fieldError(refused.html, 'product-quantity'), 'Enter a whole number.');
    assert.equal(fieldError(refused.html, 'variant-adjustment-0'), 'Enter an amount in MRU, such as 250 or 250.50.');
    assert.equal(fieldError(refused.html, 'product-name'), undefined);
    assert.equal(fieldError(refused.html, 'variant-quantity-0'), undefined);
    assert.equal(valueOf(refused.html, 'product-price'), 'cheap');
    assert.equal(valueOf(refused.html, 'product-quantity'), 'many');
    assert.equal(valueOf(refused.html, 'product-sku'), 'SAN-1');
    assert.equal(valueOf(refused.html, 'variant-adjustment-0'), '2,5x');
    assert.equal(valueOf(refused.html, 'variant-quantity-0'), '3');
    const empty = await owner.submit(`${PRODUCTS}/new`, PRODUCTS, {
      ...typed,
      name: '  ',
      price: '100',
      quantity: '',
      variantAdjustment: ['', ''],
    });
    assert.equal(fieldError(empty.html, 'product-name'), 'Fill in this field.');
    assert.equal(fieldError(empty.html, 'product-price'), undefined);
    const count = await t.runtime.db
      .selectFrom('products')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('name', '=', 'Sandales')
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  test('delete needs its confirmation box, is a soft delete, frees the SKU, and is for owners only', async () => {
    const id = await create({ name: 'Old stock', price: '10', sku: 'OLD-1' });
    const path = `${PRODUCTS}/${id}`;
    const { client: viewer } = await signedIn(t, business.id, 'viewer');
    assert.doesNotMatch((await viewer.get(path)).html, /action="[^"]*\/delete"/);
    const viewerForm = { ...hiddenFields((await owner.get(path)).html, `${path}/delete`), confirm: 'yes' };
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await viewer.get(path)).html)![1]!;
    assert.equal((await viewer.post(`${path}/delete`, { ...viewerForm, _csrf: csrf })).status, 403);

    const unconfirmed = await owner.submit(path, `${path}/delete`);
    assert.equal(unconfirmed.status, 400);
    assert.equal(fieldError(unconfirmed.html, 'delete-confirm'), 'Fill in this field.');
    assert.equal((await productRow(id)).deleted_at, null);

    const deleted = await owner.submit(path, `${path}/delete`, { confirm: 'yes' });
    assert.equal(deleted.location, `${PRODUCTS}?notice=done`);
    const row = await productRow(id);
    assert.ok(row.deleted_at, 'soft deleted: the row stays');
    assert.equal((await owner.get(path)).status, 404);
    assert.doesNotMatch((await owner.get(PRODUCTS)).html, /Old stock/);
    const reused = await create({ name: 'New stock', price: '12', sku: 'OLD-1' });
    assert.notEqual(reused, id);
  });

  test('the list shows each product’s first image as a thumbnail', async () => {
    const id = await create({ name: 'Lampe', price: '80' });
    const path = `${PRODUCTS}/${id}`;
    const fields = hiddenFields((await owner.get(path)).html, `${path}/images`);
    const { body, contentType } = multipartBody([
      ...Object.entries(fields).map(([field, content]) => ({ field, content })),
      { field: 'file', content: PNG, filename: 'lamp.png', contentType: 'image/png' },
    ]);
    const uploaded = await fetch(`${t.baseUrl}${path}/images`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': contentType, cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      body,
    });
    assert.equal(uploaded.status, 303);
    const list = await owner.get(PRODUCTS);
    const at = list.html.indexOf(`href="/dashboard/products/${encodeURIComponent(id)}"`);
    const row = list.html.slice(list.html.lastIndexOf('<tr>', at), list.html.indexOf('</tr>', at));
    const src = /<img class="thumb" src="([^"]+)"/.exec(row)?.[1];
    assert.ok(src?.startsWith('/media/'), row);
    const served = await fetch(`${t.baseUrl}${src}`);
    assert.equal(served.status, 200);
    assert.match(list.html, /No image/, 'a product without images says so');
  });
});
