import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { multipartBody } from '../support/multipart.js';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { FormClient, hiddenFields, signedIn } from './support.js';

const PRODUCTS = '/dashboard/products';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);
const HEADER = 'externalId,name,price,description,quantity,status,categoryId,costBasis';

/** Posts a multipart form as a browser does: its hidden fields, then the file part. */
async function postFile(
  t: TestApp,
  client: FormClient,
  action: string,
  fields: Record<string, string>,
  file: { content: Buffer | string; filename: string; contentType: string } | null,
) {
  const { body, contentType } = multipartBody([
    ...Object.entries(fields).map(([field, content]) => ({ field, content })),
    ...(file ? [{ field: 'file', ...file }] : []),
  ]);
  const response = await fetch(`${t.baseUrl}${action}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': contentType,
      cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    },
    body,
  });
  return { status: response.status, location: response.headers.get('location'), html: await response.text() };
}

describe('dashboard products: list, create, edit, images, CSV import and export', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ approveLive: false });
  });
  afterAll(() => t?.close());

  const productRow = (id: string) =>
    t.runtime.db.selectFrom('products').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const productCount = async () =>
    Number(
      (
        await t.runtime.db
          .selectFrom('products')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('business_id', '=', business.id)
          .where('deleted_at', 'is', null)
          .executeTakeFirstOrThrow()
      ).n,
    );

  async function createFromForm(client: FormClient, name: string): Promise<string> {
    const answer = await client.submit(`${PRODUCTS}/new`, PRODUCTS, {
      name,
      price: '120.50',
      description: 'Fresh',
      status: 'ACTIVE',
      quantity: '7',
      variantId: ['', ''],
      variantType: ['SIZE', ''],
      variantLabel: ['Large', ''],
      variantAdjustment: ['15', ''],
      variantQuantity: ['3', ''],
      optionId: ['', ''],
      optionName: ['Gift wrap', ''],
      optionAdjustment: ['-0.50', ''],
    });
    assert.equal(answer.status, 303, answer.html.slice(0, 300));
    const id = /^\/dashboard\/products\/(prod_[A-Za-z0-9]+)\?notice=done$/.exec(answer.location ?? '')?.[1];
    assert.ok(id, answer.location ?? '');
    return id;
  }

  test('an owner creates a product with a variant and an option; a double submit creates one', async () => {
    const { client } = await signedIn(t, business.id);
    const page = await client.get(`${PRODUCTS}/new`);
    const form = {
      ...hiddenFields(page.html, PRODUCTS),
      name: 'Thé vert',
      price: '120.50',
      status: 'ACTIVE',
      quantity: '7',
      variantId: ['', ''],
      variantType: ['SIZE', ''],
      variantLabel: ['Large', ''],
      variantAdjustment: ['15', ''],
      variantQuantity: ['3', ''],
      optionName: 'Gift wrap',
      optionId: '',
      optionAdjustment: '-0.50',
    };
    const before = await productCount();
    const answers = await Promise.all([client.post(PRODUCTS, form), client.post(PRODUCTS, form)]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [303, 303],
    );
    assert.equal(await productCount(), before + 1);
    const id = /prod_[A-Za-z0-9]+/.exec(answers[0]!.location!)![0];
    assert.equal(/prod_[A-Za-z0-9]+/.exec(answers[1]!.location!)![0], id, 'the repeat goes where the first went');
    const row = await productRow(id);
    assert.equal(row.name, 'Thé vert');
    assert.equal(row.price, 12_050);
    assert.equal(row.quantity, 7);
    assert.equal(row.status, 'ACTIVE');
    assert.deepEqual(
      row.variants.map((v) => [v.type, v.label, v.priceAdjustment, v.quantity]),
      [['SIZE', 'Large', 1500, 3]],
    );
    assert.deepEqual(
      row.options.map((o) => [o.name, o.priceAdjustment]),
      [['Gift wrap', -50]],
    );

    const list = await client.get(`${PRODUCTS}?q=vert&status=ACTIVE`);
    assert.match(list.html, /Thé vert/);
    const disabledOnly = await client.get(`${PRODUCTS}?status=DISABLED`);
    assert.doesNotMatch(disabledOnly.html, /Thé vert/);
  });

  test('editing keeps variant ids, changes price, stock and status; bad input is refused and changes nothing', async () => {
    const { client } = await signedIn(t, business.id);
    const id = await createFromForm(client, 'Sandales');
    const variantId = (await productRow(id)).variants[0]!._id;
    const path = `${PRODUCTS}/${id}`;
    const page = await client.get(path);
    assert.match(page.html, new RegExp(`name="variantId" value="${variantId}"`));
    const edited = await client.submit(path, path, {
      name: 'Sandales cuir',
      price: '99',
      status: 'DISABLED',
      quantity: '',
      variantId: [variantId, '', ''],
      variantType: ['SIZE', 'SIZE', ''],
      variantLabel: ['XL', 'S', ''],
      variantAdjustment: ['20', '', ''],
      variantQuantity: ['1', '', ''],
      optionId: ['', ''],
      optionName: ['', ''],
      optionAdjustment: ['', ''],
    });
    assert.equal(edited.location, `${path}?notice=done`);
    const row = await productRow(id);
    assert.equal(row.name, 'Sandales cuir');
    assert.equal(row.price, 9_900);
    assert.equal(row.status, 'DISABLED');
    assert.equal(row.quantity, null);
    assert.deepEqual(
      row.variants.map((v) => [v._id === variantId, v.label, v.priceAdjustment, v.quantity]),
      [
        [true, 'XL', 2000, 1],
        [false, 'S', 0, null],
      ],
    );
    assert.deepEqual(row.options, []);

    const badPrice = await client.submit(path, path, { name: 'X', price: 'cheap', status: 'ACTIVE' });
    assert.equal(badPrice.status, 400, 'drawn again with the refusal on the price');
    assert.match(
      badPrice.html,
      /id="product-price" name="price" required inputmode="decimal" value="cheap" aria-invalid="true"/,
    );
    const belowZero = await client.submit(path, path, {
      name: 'X',
      price: '1',
      status: 'ACTIVE',
      optionId: '',
      optionName: 'Discount',
      optionAdjustment: '-5',
    });
    assert.equal(belowZero.status, 400, 'drawn again, the option kept');
    assert.match(belowZero.html, /name="optionName" value="Discount"/);
    assert.equal((await productRow(id)).name, 'Sandales cuir');
    const missing = await client.post(`${PRODUCTS}/prod_doesnotexist`, {
      ...hiddenFields((await client.get(path)).html, path),
      name: 'X',
      price: '1',
      status: 'ACTIVE',
    });
    assert.equal(missing.location, `${PRODUCTS}/prod_doesnotexist?error=PRODUCT_NOT_FOUND`);
  });

  test('an image upload is stored once, shown on the page and served; a non-image is refused', async () => {
    const { client } = await signedIn(t, business.id);
    const id = await createFromForm(client, 'Lampe');
    const path = `${PRODUCTS}/${id}`;
    const fields = hiddenFields((await client.get(path)).html, `${path}/images`);
    const file = { content: PNG, filename: 'lamp.png', contentType: 'image/png' };
    const first = await postFile(t, client, `${path}/images`, fields, file);
    assert.equal(first.status, 303, first.html.slice(0, 300));
    assert.equal(first.location, `${path}?notice=done`);
    const second = await postFile(t, client, `${path}/images`, fields, file);
    assert.equal(second.location, `${path}?notice=already`);
    const row = await productRow(id);
    assert.equal(row.images.length, 1, 'a double submit uploads once');
    const page = await client.get(path);
    const src = /<img src="(\/media\/[^"]+)"/.exec(page.html)?.[1];
    assert.ok(src, 'the page shows the image');
    const served = await fetch(`${t.baseUrl}${src}`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG);

    const text = hiddenFields((await client.get(path)).html, `${path}/images`);
    const refused = await postFile(t, client, `${path}/images`, text, {
      content: 'not an image',
      filename: 'x.png',
      contentType: 'image/png',
    });
    assert.equal(refused.location, `${path}?error=INVALID_FILE_TYPE`);
    const empty = await postFile(t, client, `${path}/images`, text, null);
    assert.equal(empty.location, `${path}?error=NO_FILE`);
    const huge = await postFile(t, client, `${path}/images`, text, {
      content: Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]),
      filename: 'huge.png',
      contentType: 'image/png',
    });
    assert.equal(huge.location, `${path}?error=FILE_TOO_LARGE`);
    // Anywhere but an upload form, a multipart file is refused before anything reads it.
    const elsewhere = await postFile(t, client, `${path}`, text, file);
    assert.equal(elsewhere.status, 413);
    const anonymous = await postFile(t, new FormClient(t), '/dashboard/login', {}, file);
    assert.equal(anonymous.status, 413);

    const { _csrf: _token, ...noCsrf } = hiddenFields((await client.get(path)).html, `${path}/images`);
    const forged = await postFile(t, client, `${path}/images`, noCsrf, file);
    assert.equal(forged.status, 403);
    const viewer = await signedIn(t, business.id, 'viewer');
    const viewerPage = await viewer.client.get(path);
    assert.ok(!viewerPage.html.includes(`action="${path}/images"`));
    const csrf = /name="_csrf" value="([^"]+)"/.exec(viewerPage.html)![1]!;
    const byViewer = await postFile(
      t,
      viewer.client,
      `${path}/images`,
      { _csrf: csrf, _idem: 'abcdefghijklmnop9999' },
      file,
    );
    assert.equal(byViewer.status, 403);
    assert.equal((await productRow(id)).images.length, 1);

    const imageId = (await productRow(id)).images[0]!.id;
    const removeForm = hiddenFields((await client.get(path)).html, `${path}/images/${imageId}/remove`);
    const removed = await client.post(`${path}/images/${imageId}/remove`, removeForm);
    assert.equal(removed.location, `${path}?notice=done`);
    const again = await client.post(`${path}/images/${imageId}/remove`, removeForm);
    assert.equal(again.location, `${path}?notice=already`);
    assert.equal((await productRow(id)).images.length, 0);
    assert.equal((await fetch(`${t.baseUrl}${src}`)).status, 404);
  });

  test('CSV import: the dry run reports in a table and writes nothing; the import writes; export downloads', async () => {
    const shop = await t.createBusiness({ approveLive: false });
    const { client } = await signedIn(t, shop.id);
    const csv = [HEADER, 'DASH-1,Couscous,1200,,30,ACTIVE,,', 'DASH-2,Bad price,12.50,,,,,'].join('\n');
    const file = { content: csv, filename: 'products.csv', contentType: 'text/csv' };
    const dry = await postFile(
      t,
      client,
      `${PRODUCTS}/import`,
      { ...hiddenFields((await client.get(PRODUCTS)).html, `${PRODUCTS}/import`), dryRun: 'on' },
      file,
    );
    assert.equal(dry.status, 200, dry.html.slice(0, 300));
    assert.match(dry.html, /Dry run report/);
    assert.match(
      dry.html,
      /id="import-summary">[\s\S]*<td class="num">1<\/td><td class="num">0<\/td><td class="num">0<\/td><td class="num">1<\/td>/,
    );
    assert.match(dry.html, /id="import-errors">[\s\S]*<td class="num">3<\/td>/);
    const none = await t.runtime.db.selectFrom('products').select('id').where('business_id', '=', shop.id).execute();
    assert.equal(none.length, 0);

    const fields = hiddenFields((await client.get(PRODUCTS)).html, `${PRODUCTS}/import`);
    const real = await postFile(t, client, `${PRODUCTS}/import`, fields, file);
    assert.equal(real.status, 200);
    assert.match(real.html, /Import report/);
    const again = await postFile(t, client, `${PRODUCTS}/import`, fields, file);
    assert.equal(again.status, 303);
    assert.equal(again.location, `${PRODUCTS}?notice=already`);
    const rows = await t.runtime.db.selectFrom('products').select('name').where('business_id', '=', shop.id).execute();
    assert.deepEqual(
      rows.map((r) => r.name),
      ['Couscous'],
    );
    const broken = await postFile(
      t,
      client,
      `${PRODUCTS}/import`,
      hiddenFields((await client.get(PRODUCTS)).html, `${PRODUCTS}/import`),
      {
        content: 'no,header,here\n1,2,3',
        filename: 'x.csv',
        contentType: 'text/csv',
      },
    );
    assert.equal(broken.location, `${PRODUCTS}?error=CSV_INVALID`);

    const exported = await client.get(`${PRODUCTS}/export`);
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(exported.headers.get('content-disposition') ?? '', /attachment/);
    assert.match(exported.html, /DASH-1,Couscous,1200/);
  });
  test('a viewer sees products but cannot create, edit or import; a form without its CSRF token is refused', async () => {
    const owner = await signedIn(t, business.id);
    const id = await createFromForm(owner.client, 'Tapis');
    const path = `${PRODUCTS}/${id}`;
    const viewer = await signedIn(t, business.id, 'viewer');
    const list = await viewer.client.get(PRODUCTS);
    assert.equal(list.status, 200);
    assert.ok(!list.html.includes('id="new-product"'));
    assert.ok(!list.html.includes(`action="${PRODUCTS}/import"`));
    const page = await viewer.client.get(path);
    assert.equal(page.status, 200);
    assert.match(page.html, /<fieldset disabled>/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const form = { _csrf: csrf, _idem: 'abcdefghijklmnop5678', name: 'Hijacked', price: '1', status: 'ACTIVE' };
    assert.equal((await viewer.client.post(PRODUCTS, form)).status, 403);
    assert.equal((await viewer.client.post(path, form)).status, 403);
    const imported = await postFile(
      t,
      viewer.client,
      `${PRODUCTS}/import`,
      { _csrf: csrf, _idem: 'abcdefghijklmnop5679' },
      {
        content: `${HEADER}\nV-1,Viewer,100,,,,,`,
        filename: 'v.csv',
        contentType: 'text/csv',
      },
    );
    assert.equal(imported.status, 403);
    const { _csrf: _token, ...noCsrf } = hiddenFields((await owner.client.get(path)).html, path);
    const forged = await owner.client.post(path, { ...noCsrf, name: 'Forged', price: '1', status: 'ACTIVE' });
    assert.equal(forged.status, 403);
    assert.equal((await productRow(id)).name, 'Tapis');
    const viewerImport = await t.runtime.db
      .selectFrom('products')
      .select('id')
      .where('external_id', '=', 'V-1')
      .execute();
    assert.equal(viewerImport.length, 0);
  });
});
