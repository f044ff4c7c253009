import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct, PRODUCTS, write } from './support.js';

const FULL = {
  name: 'Thé à la menthe',
  price: 2500,
  description: 'Green tea with fresh mint',
  externalId: 'TEA-001',
  categoryId: 'drinks',
  quantity: 40,
  status: 'ACTIVE',
  isFlexiblePrice: true,
  costBasis: 900,
  lowStockThreshold: 8,
  images: [{ url: 'https://cdn.example/tea.jpg', sortOrder: 1 }, { url: 'https://cdn.example/tea-2.jpg' }],
  variants: [
    { type: 'SIZE', label: 'Small', value: 'S', priceAdjustment: -500, quantity: 10 },
    { type: 'SIZE', label: 'Large', priceAdjustment: 700 },
  ],
  options: [{ name: 'Extra sugar', priceAdjustment: 50 }],
  preparationTime: { value: 10, unit: 'minutes' },
};

describe('products: create, read, replace, patch, delete (api.md 2.3, 3.2, 4.2; decisions "Products")', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  test('create answers 201 with the full product shape of decisions.md', async () => {
    const response = await t.request('POST', PRODUCTS, { key: sk, idempotencyKey: true, body: FULL });
    expectStatus(response, 201);
    const product = response.body.data;
    assert.deepEqual(Object.keys(product).sort(), [
      'categoryId',
      'costBasis',
      'createdAt',
      'currency',
      'description',
      'externalId',
      'id',
      'images',
      'isFlexiblePrice',
      'lowStockThreshold',
      'name',
      'options',
      'preparationTime',
      'price',
      'quantity',
      'sandbox',
      'seller',
      'shopId',
      'status',
      'updatedAt',
      'variants',
    ]);
    assert.match(product.id, /^prod_/);
    assert.equal(product.shopId, business.shopId);
    assert.equal(product.currency, 'MRU');
    assert.equal(product.sandbox, true);
    for (const field of [
      'name',
      'price',
      'description',
      'externalId',
      'categoryId',
      'quantity',
      'status',
      'isFlexiblePrice',
      'costBasis',
      'lowStockThreshold',
    ]) {
      assert.deepEqual(product[field], (FULL as Record<string, unknown>)[field], field);
    }
    assert.deepEqual(product.preparationTime, { value: 10, unit: 'minutes' });
    assert.deepEqual(
      product.images.map((i: { url: string; sortOrder: number }) => [i.url, i.sortOrder]),
      [
        ['https://cdn.example/tea.jpg', 1],
        ['https://cdn.example/tea-2.jpg', 1],
      ].sort((a, b) => (a[1] as number) - (b[1] as number)),
    );
    for (const image of product.images) assert.match(image.id, /^img_/);
    assert.deepEqual(
      product.variants.map(({ _id, ...rest }: { _id: string }) => (assert.match(_id, /^var_/), rest)),
      [
        { type: 'SIZE', label: 'Small', value: 'S', priceAdjustment: -500, quantity: 10 },
        { type: 'SIZE', label: 'Large', value: null, priceAdjustment: 700, quantity: null },
      ],
    );
    assert.match(product.options[0]._id, /^opt_/);
    assert.equal(product.options[0].name, 'Extra sugar');
  });

  test('without status a product is DISABLED; defaults for everything not sent', async () => {
    const product = await createProduct(t, sk, { name: 'Plain', price: 100 });
    assert.equal(product.status, 'DISABLED');
    assert.equal(product.quantity, null, 'unlimited stock');
    assert.equal(product.externalId, null);
    assert.equal(product.description, null);
    assert.equal(product.isFlexiblePrice, false);
    assert.equal(product.lowStockThreshold, 5);
    assert.deepEqual([product.images, product.variants, product.options], [[], [], []]);
    assert.equal(product.preparationTime, null);
  });

  test('{id} resolves the internal id or the externalId on every route', async () => {
    const product = await createProduct(t, sk, { name: 'Resolvable', price: 100, externalId: 'RES-1', quantity: 10 });
    for (const ref of [product.id, 'RES-1']) {
      const got = await t.request('GET', `${PRODUCTS}/${ref}`, { key: sk });
      expectStatus(got, 200);
      assert.equal(got.body.data.id, product.id);
      expectStatus(await write(t, sk, 'PATCH', `/${ref}`, { description: `via ${ref}` }), 200);
      expectStatus(
        await write(t, sk, 'PUT', `/${ref}`, { name: 'Resolvable', price: 100, externalId: 'RES-1', quantity: 10 }),
        200,
      );
      const stock = await write(t, sk, 'PATCH', `/${ref}/inventory`, { delta: -1 });
      expectStatus(stock, 200);
    }
    expectStatus(await write(t, sk, 'DELETE', '/RES-1'), 200);
    expectError(await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk }), 404, 'PRODUCT_NOT_FOUND');
  });

  test('PUT replaces the whole product: name and price required, omitted fields reset', async () => {
    const product = await createProduct(t, sk, { ...FULL, externalId: 'PUT-1' });
    expectError(await write(t, sk, 'PUT', `/${product.id}`, { price: 100 }), 400, 'VALIDATION_ERROR');
    expectError(await write(t, sk, 'PUT', `/${product.id}`, { name: 'No price' }), 400, 'VALIDATION_ERROR');
    const response = await write(t, sk, 'PUT', `/${product.id}`, { name: 'Replaced', price: 999 });
    expectStatus(response, 200);
    const replaced = response.body.data;
    assert.equal(replaced.id, product.id);
    assert.equal(replaced.name, 'Replaced');
    assert.equal(replaced.price, 999);
    assert.equal(replaced.status, 'DISABLED');
    assert.equal(replaced.externalId, null);
    assert.equal(replaced.description, null);
    assert.equal(replaced.quantity, null);
    assert.equal(replaced.costBasis, null);
    assert.equal(replaced.lowStockThreshold, 5);
    assert.deepEqual([replaced.images, replaced.variants, replaced.options], [[], [], []]);
    assert.equal(replaced.createdAt, product.createdAt);
    assert.ok(replaced.updatedAt > product.updatedAt);
  });

  test('PATCH changes only the fields sent; null clears a nullable field', async () => {
    const product = await createProduct(t, sk, { ...FULL, externalId: 'PATCH-1' });
    const response = await write(t, sk, 'PATCH', `/${product.id}`, {
      price: 2600,
      description: null,
      quantity: null,
      costBasis: null,
    });
    expectStatus(response, 200);
    const patched = response.body.data;
    assert.equal(patched.price, 2600);
    assert.equal(patched.description, null);
    assert.equal(patched.quantity, null);
    assert.equal(patched.costBasis, null);
    for (const field of [
      'name',
      'externalId',
      'categoryId',
      'status',
      'isFlexiblePrice',
      'lowStockThreshold',
      'images',
      'variants',
      'options',
      'preparationTime',
    ]) {
      assert.deepEqual(patched[field], product[field], field);
    }
    for (const body of [{ name: null }, { price: null }, { status: null }, { variants: null }, { price: 1.5 }]) {
      expectError(await write(t, sk, 'PATCH', `/${product.id}`, body), 400, 'VALIDATION_ERROR');
    }
    const cleared = await write(t, sk, 'PATCH', `/${product.id}`, {
      externalId: null,
      preparationTime: null,
      categoryId: null,
    });
    assert.equal(cleared.body.data.externalId, null);
    assert.equal(cleared.body.data.preparationTime, null);
  });

  test('variant and option ids stay stable across PATCHes that do not remove them', async () => {
    const product = await createProduct(t, sk, { ...FULL, externalId: 'STABLE-1' });
    const [small, large] = product.variants;
    const [sugar] = product.options;
    // With the _id: fields change, the id stays; a variant left out is removed; a new one gets an id.
    const first = await write(t, sk, 'PATCH', `/${product.id}`, {
      variants: [
        { _id: large._id, type: 'SIZE', label: 'Large', priceAdjustment: 900 },
        { type: 'SIZE', label: 'Medium' },
      ],
    });
    expectStatus(first, 200);
    assert.equal(first.body.data.variants[0]._id, large._id);
    assert.equal(first.body.data.variants[0].priceAdjustment, 900);
    assert.ok(!first.body.data.variants.some((v: { _id: string }) => v._id === small._id));
    const medium = first.body.data.variants[1];
    assert.match(medium._id, /^var_/);
    // Without the _id, a variant with the same type and label keeps its id; options by name.
    const second = await write(t, sk, 'PATCH', `/${product.id}`, {
      variants: [
        { type: 'SIZE', label: 'Medium', quantity: 3 },
        { type: 'SIZE', label: 'Large' },
      ],
      options: [{ name: 'Extra sugar', priceAdjustment: 75 }],
    });
    assert.deepEqual(
      second.body.data.variants.map((v: { _id: string }) => v._id),
      [medium._id, large._id],
    );
    assert.equal(second.body.data.options[0]._id, sugar._id);
    assert.equal(second.body.data.options[0].priceAdjustment, 75);
    // A PATCH that does not send variants leaves them alone.
    const third = await write(t, sk, 'PATCH', `/${product.id}`, { name: 'Renamed' });
    assert.deepEqual(third.body.data.variants, second.body.data.variants);
    // An _id that is not on the product.
    const unknown = await write(t, sk, 'PATCH', `/${product.id}`, {
      variants: [{ _id: 'var_nope', type: 'SIZE', label: 'X' }],
    });
    expectError(unknown, 404, 'VARIANT_NOT_FOUND');
  });

  test('delete is soft: gone from reads and lists, and its externalId is free again', async () => {
    const product = await createProduct(t, sk, {
      name: 'Ephemeral',
      price: 100,
      externalId: 'GONE-1',
      status: 'ACTIVE',
    });
    const deleted = await write(t, sk, 'DELETE', `/${product.id}`);
    expectStatus(deleted, 200);
    assert.deepEqual(deleted.body.data, { deleted: true });
    expectError(await t.request('GET', `${PRODUCTS}/GONE-1`, { key: sk }), 404, 'PRODUCT_NOT_FOUND');
    expectError(await write(t, sk, 'PATCH', `/${product.id}`, { price: 1 }), 404, 'PRODUCT_NOT_FOUND');
    expectError(await write(t, sk, 'DELETE', `/${product.id}`), 404, 'PRODUCT_NOT_FOUND');
    const list = await t.request('GET', `${PRODUCTS}?limit=100`, { key: sk });
    assert.ok(!list.body.data.items.some((p: { id: string }) => p.id === product.id));
    const again = await createProduct(t, sk, { name: 'Reborn', price: 100, externalId: 'GONE-1' });
    assert.notEqual(again.id, product.id);
    const row = await t.runtime.db
      .selectFrom('products')
      .select('deleted_at')
      .where('id', '=', product.id)
      .executeTakeFirstOrThrow();
    assert.ok(row.deleted_at, 'the row is kept, marked deleted');
  });

  test('EXTERNAL_ID_TAKEN (409) on create, PUT and PATCH; other environments and shops may reuse it', async () => {
    await createProduct(t, sk, { name: 'Owner', price: 100, externalId: 'DUP-1' });
    const response = await t.request('POST', PRODUCTS, {
      key: sk,
      idempotencyKey: true,
      body: { name: 'Clash', price: 1, externalId: 'DUP-1' },
    });
    expectError(response, 409, 'EXTERNAL_ID_TAKEN');
    const other = await createProduct(t, sk, { name: 'Other', price: 100, externalId: 'DUP-2' });
    expectError(await write(t, sk, 'PATCH', `/${other.id}`, { externalId: 'DUP-1' }), 409, 'EXTERNAL_ID_TAKEN');
    expectError(
      await write(t, sk, 'PUT', `/${other.id}`, { name: 'Other', price: 1, externalId: 'DUP-1' }),
      409,
      'EXTERNAL_ID_TAKEN',
    );
    assert.equal((await t.request('GET', `${PRODUCTS}/${other.id}`, { key: sk })).body.data.externalId, 'DUP-2');
    await createProduct(t, business.keys.secretLive, { name: 'Live twin', price: 100, externalId: 'DUP-1' });
    const stranger = await t.createBusiness({ name: 'Stranger' });
    await createProduct(t, stranger.keys.secretTest, { name: 'Their twin', price: 100, externalId: 'DUP-1' });
  });

  test('every field is validated: types, limits, units, integer centimes, unknown fields', async () => {
    const bad: Record<string, unknown>[] = [
      { name: '', price: 1 },
      { name: 'n'.repeat(201), price: 1 },
      { name: 'x', price: -1 },
      { name: 'x', price: 12.5 },
      { name: 'x', price: '100' },
      { name: 'x', price: 1, description: 'd'.repeat(5001) },
      { name: 'x', price: 1, externalId: 'e'.repeat(257) },
      { name: 'x', price: 1, externalId: '' },
      { name: 'x', price: 1, quantity: -1 },
      { name: 'x', price: 1, quantity: 2.5 },
      { name: 'x', price: 1, status: 'ARCHIVED' },
      { name: 'x', price: 1, costBasis: 10.1 },
      { name: 'x', price: 1, isFlexiblePrice: 'yes' },
      { name: 'x', price: 1, preparationTime: { value: 2, unit: 'weeks' } },
      { name: 'x', price: 1, preparationTime: { value: 1.5, unit: 'hours' } },
      { name: 'x', price: 1, images: Array.from({ length: 21 }, (_, i) => ({ url: `https://cdn.example/${i}.png` })) },
      { name: 'x', price: 1, images: [{ url: 'not a url' }] },
      { name: 'x', price: 1, variants: Array.from({ length: 101 }, (_, i) => ({ type: 'SIZE', label: `L${i}` })) },
      { name: 'x', price: 1, variants: [{ label: 'no type' }] },
      { name: 'x', price: 1, variants: [{ type: 'SIZE', label: 'L', priceAdjustment: 0.5 }] },
      { name: 'x', price: 1, options: Array.from({ length: 51 }, (_, i) => ({ name: `O${i}`, priceAdjustment: 1 })) },
      { name: 'x', price: 1, options: [{ name: 'no adjustment' }] },
      { name: 'x', price: 1, color: 'red' },
    ];
    for (const body of bad) {
      const response = await t.request('POST', PRODUCTS, { key: sk, idempotencyKey: true, body });
      expectError(response, 400, 'VALIDATION_ERROR');
    }
    const limits = await t.request('POST', PRODUCTS, {
      key: sk,
      idempotencyKey: true,
      body: {
        name: 'n'.repeat(200),
        price: 5,
        externalId: 'e'.repeat(256),
        description: 'd'.repeat(5000),
        images: Array.from({ length: 20 }, (_, i) => ({ url: `https://cdn.example/${i}.png` })),
        variants: Array.from({ length: 100 }, (_, i) => ({ type: 'SIZE', label: `L${i}`, priceAdjustment: -5 })),
        options: Array.from({ length: 50 }, (_, i) => ({ name: `O${i}`, priceAdjustment: 1 })),
        preparationTime: { value: 2, unit: 'days' },
      },
    });
    expectStatus(limits, 201);
  });

  test('SHOP_NOT_FOUND for a business without a shop; PRODUCT_NOT_FOUND across businesses and environments', async () => {
    const shopless = await t.createBusiness({ name: 'No shop', withShop: false });
    expectError(
      await t.request('POST', PRODUCTS, {
        key: shopless.keys.secretTest,
        idempotencyKey: true,
        body: { name: 'x', price: 1 },
      }),
      404,
      'SHOP_NOT_FOUND',
    );
    expectError(await t.request('GET', PRODUCTS, { key: shopless.keys.secretTest }), 404, 'SHOP_NOT_FOUND');
    const product = await createProduct(t, sk, { name: 'Mine', price: 100, externalId: 'MINE-1' });
    const stranger = await t.createBusiness({ name: 'Stranger 2' });
    for (const [key, ref] of [
      [stranger.keys.secretTest, product.id],
      [stranger.keys.secretTest, 'MINE-1'],
      [business.keys.secretLive, 'MINE-1'],
      [sk, 'prod_unknown'],
    ] as const) {
      expectError(await t.request('GET', `${PRODUCTS}/${ref}`, { key }), 404, 'PRODUCT_NOT_FOUND');
    }
    // Its own product by id from the other environment: SANDBOX_MISMATCH (issue 15 item 10).
    expectError(
      await t.request('GET', `${PRODUCTS}/${product.id}`, { key: business.keys.secretLive }),
      403,
      'SANDBOX_MISMATCH',
    );
    expectError(
      await write(t, stranger.keys.secretTest, 'PATCH', `/${product.id}`, { price: 1 }),
      404,
      'PRODUCT_NOT_FOUND',
    );
    expectError(await write(t, stranger.keys.secretTest, 'DELETE', `/${product.id}`), 404, 'PRODUCT_NOT_FOUND');
  });

  test('publishable keys read ACTIVE products only, without the cost basis; writes need a secret key', async () => {
    const active = await createProduct(t, sk, { name: 'Public', price: 100, status: 'ACTIVE', costBasis: 40 });
    const draft = await createProduct(t, sk, { name: 'Draft', price: 100, costBasis: 40 });
    const pk = business.keys.publishableTest;
    const got = await t.request('GET', `${PRODUCTS}/${active.id}`, { key: pk });
    expectStatus(got, 200);
    assert.equal(got.body.data.costBasis, null);
    assert.equal(got.headers.get('access-control-allow-origin'), '*');
    expectError(await t.request('GET', `${PRODUCTS}/${draft.id}`, { key: pk }), 404, 'PRODUCT_NOT_FOUND');
    const list = await t.request('GET', `${PRODUCTS}?status=ALL&limit=100`, { key: pk });
    assert.ok(list.body.data.items.every((p: { status: string }) => p.status === 'ACTIVE'));
    assert.equal((await t.request('GET', `${PRODUCTS}?status=DISABLED`, { key: pk })).body.data.total, 0);
    expectError(
      await t.request('POST', PRODUCTS, { key: pk, idempotencyKey: true, body: { name: 'x', price: 1 } }),
      403,
      'SECRET_KEY_REQUIRED',
    );
    expectError(
      await t.request('POST', PRODUCTS, { key: sk, body: { name: 'x', price: 1 } }),
      400,
      'IDEMPOTENCY_KEY_REQUIRED',
    );
    const readOnly = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['store.products:read'],
    });
    expectError(
      await t.request('POST', PRODUCTS, {
        key: readOnly.body.data.key,
        idempotencyKey: true,
        body: { name: 'x', price: 1 },
      }),
      403,
      'SCOPE_REQUIRED',
    );
    const noRead = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['intents:read'],
    });
    expectError(await t.request('GET', PRODUCTS, { key: noRead.body.data.key }), 403, 'SCOPE_REQUIRED');
  });
});
