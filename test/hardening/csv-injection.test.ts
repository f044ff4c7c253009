import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { parse } from 'csv-parse/sync';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createProduct, PRODUCTS } from '../products/support.js';
import { act, createIntent } from '../intents/support.js';
import { BALANCE } from '../payments/support.js';

const DANGEROUS = [
  '=HYPERLINK("https://evil.example","x")',
  "+cmd|' /C calc'!A0",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  '-2+3',
  '\t=1+1',
  '\r=1+1',
  "'already quoted",
  "''twice",
  // Issue 47 item 6: a cell also starts after a separator a spreadsheet may split on instead of the
  // comma (`;` in French or Arabic settings, tabs) and at a line break its quotes do not hold.
  'Loyer;=1+1;avril',
  'Loyer;  +1;@SUM(1);-2',
  'a;"=1+1";b',
  "a;'kept;''kept twice",
  'tab\t=1+1',
  'line\n=1+1\r+2\r\n@3',
];

/** Pieces of a file as a spreadsheet cuts it on `;`, tabs and line breaks, ignoring quotes (Excel in `;` mode). */
function piecesRunAsFormulas(csv: string): string[] {
  return csv.split(/[;\t\r\n]/).filter((piece) => /^"*[=+\-@]/.test(piece));
}

describe('CSV export neutralises formulas; export then import is lossless (issue 15 item 5)', () => {
  let t: TestApp;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    sk = (await t.createBusiness()).keys.secretTest;
  });
  afterAll(() => t.close());

  const exportCsv = async () => {
    const response = await t.request('GET', `${PRODUCTS}/export`, { key: sk });
    expectStatus(response, 200);
    return response.text;
  };
  const importCsv = (csv: string) =>
    t.request('POST', `${PRODUCTS}/import`, {
      key: sk,
      rawBody: csv,
      headers: { 'content-type': 'text/csv' },
      idempotencyKey: true,
    });

  test('no exported text cell starts with = + - @ tab or CR; import restores every value exactly', async () => {
    const created = [];
    for (const [i, text] of DANGEROUS.entries()) {
      created.push(
        await createProduct(t, sk, {
          name: text,
          price: 100 + i,
          externalId: i % 2 ? `=EXT${i}` : `ext-${i}`,
          description: text,
          categoryId: i % 3 ? `@cat${i}` : null,
        }),
      );
    }
    const csv = await exportCsv();
    const records = parse(csv, { columns: true }) as Record<string, string>[];
    assert.equal(records.length, DANGEROUS.length);
    for (const record of records) {
      for (const column of ['externalId', 'name', 'description', 'categoryId']) {
        const cell = record[column]!;
        assert.ok(!/^[=+\-@\t\r]/.test(cell), `${column} cell ${JSON.stringify(cell)} could run as a formula`);
      }
    }
    assert.deepEqual(piecesRunAsFormulas(csv), [], 'no piece after ; tab or a line break runs as a formula');
    const again = await importCsv(csv);
    expectStatus(again, 200);
    assert.deepEqual(
      { created: again.body.data.created, updated: again.body.data.updated, failed: again.body.data.failed },
      { created: 0, updated: 0, failed: 0 },
      again.text,
    );
    assert.equal(again.body.data.unchanged, DANGEROUS.length);
    for (const [i, product] of created.entries()) {
      const stored = (await t.request('GET', `${PRODUCTS}/${product.id}`, { key: sk })).body.data;
      assert.equal(stored.name, DANGEROUS[i]);
      assert.equal(stored.description, DANGEROUS[i]);
      assert.equal(stored.externalId, product.externalId);
      assert.equal(stored.categoryId, product.categoryId);
    }
    assert.equal(await exportCsv(), csv, 'a second export is identical');
  });

  test('an imported cell loses exactly one leading apostrophe', async () => {
    const response = await importCsv("externalId,name,price\n'APOS-1,'Tea,'250\nAPOS-2,''Mint,100\n");
    expectStatus(response, 200);
    assert.equal(response.body.data.created, 2, response.text);
    const one = (await t.request('GET', `${PRODUCTS}/APOS-1`, { key: sk })).body.data;
    assert.deepEqual([one.name, one.price], ['Tea', 250]);
    const two = (await t.request('GET', `${PRODUCTS}/APOS-2`, { key: sk })).body.data;
    assert.equal(two.name, "'Mint");
  });

  test('the balance export and both statement files: no piece after ; tab or a line break runs (issue 47 item 6)', async () => {
    const shop = await t.createBusiness({ name: 'Loyer;=1+1;avril' });
    const key = shop.keys.secretTest;
    for (const label of DANGEROUS.filter((text) => !/[\r\n]/.test(text))) {
      const intent = await createIntent(t, key, { amount: 1_000, label });
      expectStatus(await act(t, key, intent.referenceNumber, 'simulate'), 200);
    }
    const month = new Date().toISOString().slice(0, 7);
    const files = {
      export: await t.request('GET', `${BALANCE}/transactions/export`, { key }),
      statement: await t.request('GET', `${BALANCE}/statements/${month}?format=csv`, { key }),
      'statement in French': await t.request('GET', `${BALANCE}/statements/${month}?format=csv&lang=fr`, { key }),
    };
    for (const [name, response] of Object.entries(files)) {
      expectStatus(response, 200);
      assert.match(response.text, /Loyer;'=1\+1;avril/, `${name}: the description is there, neutralised`);
      assert.deepEqual(piecesRunAsFormulas(response.text), [], `${name}: a piece would run as a formula`);
    }
  });
});
