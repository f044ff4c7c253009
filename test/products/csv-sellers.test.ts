import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createSeller, patchSeller } from '../sellers/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createProduct, PRODUCTS } from './support.js';

const HEADER = 'externalId,name,price,seller';

describe('CSV import and export: the seller column (issue 52 item 5)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', RATE_LIMIT_LIVE_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ approveLive: true });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  const importCsv = (csv: string, query = '') =>
    t.request('POST', `${PRODUCTS}/import${query}`, {
      key: sk,
      rawBody: csv,
      headers: { 'content-type': 'text/csv' },
      idempotencyKey: true,
    });
  const get = async (ref: string) => (await t.request('GET', `${PRODUCTS}/${ref}`, { key: sk })).body.data;

  test('the export carries each product seller (blank for none); imported again it changes nothing', async () => {
    const seller = await createSeller(t, sk, { name: 'Stall CSV' });
    await createProduct(t, sk, { name: 'With seller', price: 500, externalId: 'SC-1', seller: seller.id });
    await createProduct(t, sk, { name: 'Without', price: 600, externalId: 'SC-2' });
    const exported = await t.request('GET', `${PRODUCTS}/export`, { key: sk });
    expectStatus(exported, 200);
    const lines = exported.text.trim().split(/\r?\n/);
    assert.equal(lines[0], 'externalId,name,price,description,quantity,status,categoryId,costBasis,seller,id');
    const cells = (externalId: string) => lines.find((line) => line.startsWith(`${externalId},`))!.split(',');
    assert.equal(cells('SC-1')[8], seller.id);
    assert.equal(cells('SC-2')[8], '');
    const again = await importCsv(exported.text);
    expectStatus(again, 200);
    assert.equal(again.body.data.failed, 0);
    assert.equal(again.body.data.updated, 0);
  });

  test('an import gives, changes and removes a product seller; a column left out keeps it', async () => {
    const a = await createSeller(t, sk, { name: 'Stall A' });
    const b = await createSeller(t, sk, { name: 'Stall B' });
    const created = await importCsv(
      `${HEADER}\nSG-1,One,100,${a.id}\nSG-2,Two,100,\nSG-3,Three,100,${a.id.toLowerCase()}\n`,
    );
    expectStatus(created, 200);
    assert.deepEqual([created.body.data.created, created.body.data.failed], [3, 0]);
    assert.equal((await get('SG-1')).seller, a.id);
    assert.equal((await get('SG-2')).seller, null);
    assert.equal((await get('SG-3')).seller, a.id, 'an id in lower case is read as the seller it names');

    const changed = await importCsv(`${HEADER}\nSG-1,One,100,${b.id}\nSG-2,Two,100,${b.id}\nSG-3,Three,100,\n`);
    expectStatus(changed, 200);
    assert.deepEqual([changed.body.data.updated, changed.body.data.failed], [3, 0]);
    assert.equal((await get('SG-1')).seller, b.id);
    assert.equal((await get('SG-2')).seller, b.id);
    assert.equal((await get('SG-3')).seller, null);

    const kept = await importCsv('externalId,name,price\nSG-1,One renamed,100\n');
    expectStatus(kept, 200);
    assert.equal((await get('SG-1')).seller, b.id);
  });

  test('an unknown, other-environment or disabled seller fails its row with the API code; the others are written', async () => {
    const active = await createSeller(t, sk, { name: 'Stall ok' });
    const disabled = await createSeller(t, sk, { name: 'Stall off' });
    const live = await createSeller(t, business.keys.secretLive, { name: 'Live stall' });
    const other = await t.createBusiness();
    const foreign = await createSeller(t, other.keys.secretTest, { name: 'Not ours' });
    // A product given the seller before it was disabled keeps it on an import that names it again.
    await createProduct(t, sk, { name: 'Kept', price: 100, externalId: 'SD-KEEP', seller: disabled.id });
    expectStatus(await patchSeller(t, sk, disabled.id, { status: 'DISABLED' }), 200);
    const csv = [
      HEADER,
      `SD-1,Fine,100,${active.id}`,
      `SD-2,Unknown,100,SL-0000000000000000`,
      `SD-3,Foreign,100,${foreign.id}`,
      `SD-4,Live,100,${live.id}`,
      `SD-5,Disabled,100,${disabled.id}`,
      `SD-KEEP,Kept renamed,100,${disabled.id}`,
      'SD-6,Malformed,100,SL-12',
    ].join('\n');
    const dry = await importCsv(csv, '?dryRun=true');
    expectStatus(dry, 200);
    const expected = [
      { row: 3, code: 'SELLER_NOT_FOUND' },
      { row: 4, code: 'SELLER_NOT_FOUND' },
      { row: 5, code: 'SANDBOX_MISMATCH' },
      { row: 6, code: 'SELLER_DISABLED' },
      { row: 8, code: 'VALIDATION_ERROR' },
    ];
    const codes = (errors: { row: number; code: string }[]) =>
      errors.map(({ row, code }) => ({ row, code })).sort((x, y) => x.row - y.row);
    assert.deepEqual(codes(dry.body.data.errors), expected);
    assert.equal(await get('SD-1').then((p) => p?.seller ?? null), null, 'a dry run writes nothing');

    const written = await importCsv(csv);
    expectStatus(written, 200);
    assert.deepEqual(codes(written.body.data.errors), expected);
    assert.deepEqual([written.body.data.created, written.body.data.updated], [1, 1]);
    assert.equal((await get('SD-1')).seller, active.id);
    const kept = await get('SD-KEEP');
    assert.deepEqual([kept.name, kept.seller], ['Kept renamed', disabled.id]);
    for (const ref of ['SD-2', 'SD-3', 'SD-4', 'SD-5', 'SD-6']) {
      expectStatus(await t.request('GET', `${PRODUCTS}/${ref}`, { key: sk }), 404);
    }
  });

  test("sellers all the caller's are read at once: only a disabled one fails its row", async () => {
    const active = await createSeller(t, sk, { name: 'Stall one read' });
    const disabled = await createSeller(t, sk, { name: 'Stall one read off' });
    expectStatus(await patchSeller(t, sk, disabled.id, { status: 'DISABLED' }), 200);
    const csv = [HEADER, `SO-1,Fine,100,${active.id}`, `SO-2,Disabled,100,${disabled.id}`].join('\n');
    const dry = await importCsv(csv, '?dryRun=true');
    expectStatus(dry, 200);
    assert.deepEqual(
      dry.body.data.errors.map(({ row, code }: { row: number; code: string }) => ({ row, code })),
      [{ row: 3, code: 'SELLER_DISABLED' }],
    );
  });
});
