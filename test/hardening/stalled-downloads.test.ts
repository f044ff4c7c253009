import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { signedIn } from '../dashboard/support.js';
import { BALANCE } from '../payments/support.js';
import { PRODUCTS } from '../products/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { complete, stalledDownload, type StalledDownload } from '../support/stalled-download.js';

const STALL_SECONDS = 6;
const PER_BUSINESS = 3;
/** Rows of about 200 bytes: a file of some 20 MB, far more than the kernel's socket buffers hold. */
const ROWS = 100_000;

describe('stalled downloads are ended, and a business has a few at once (issue 47 item 2)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let key: string;
  const month = new Date().toISOString().slice(0, 7);
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        RATE_LIMIT_LIVE_PER_MINUTE: '100000',
        DOWNLOAD_STALL_SECONDS: String(STALL_SECONDS),
        DOWNLOADS_PER_BUSINESS: String(PER_BUSINESS),
      },
    });
    business = await t.createBusiness({ name: 'Large files' });
    key = business.keys.secretTest;
    // This month's rows, a millisecond apart, oldest first.
    await sql`INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
        source_kind, detail, ledger_transaction_id, created_at)
      SELECT 'txn_stall' || lpad(i::text, 7, '0'), ${business.id}, 'test', 'payment', 1000, 10, 990,
        'PI-0000000000000001', 'payment_intent', jsonb_build_object('label', 'Loyer ' || i || ' ' || repeat('x', 100)), 'ltx_stall',
        date_trunc('month', now()) + i * interval '1 millisecond'
      FROM generate_series(1, ${ROWS}) AS i`.execute(t.runtime.db);
  });
  afterAll(() => t.close());

  const auth = () => ({ authorization: `Bearer ${key}` });

  test('a client that stops reading is ended after DOWNLOAD_STALL_SECONDS; one more than the cap is refused meanwhile', async () => {
    const opened = Date.now();
    const stalled = await Promise.all(
      [
        `${BALANCE}/transactions/export`,
        `${BALANCE}/statements/${month}?format=csv`,
        `${BALANCE}/statements/${month}?format=html&lang=ar`,
      ].map((path) => stalledDownload(t.baseUrl, path, auth())),
    );
    for (const download of stalled) assert.equal(download.status, 200, download.head);

    // The cap: the business's fourth download at once, whichever export, is refused before any work.
    const refused = await t.request('GET', `${PRODUCTS}/export`, { key });
    expectError(refused, 429, 'TOO_MANY_DOWNLOADS');
    assert.equal(refused.headers.get('retry-after'), '10');
    expectError(
      await t.request('GET', `${BALANCE}/statements/${month}?format=csv`, { key }),
      429,
      'TOO_MANY_DOWNLOADS',
    );
    // The dashboard's downloads are the same downloads.
    const { client } = await signedIn(t, business.id);
    const page = await client.get('/dashboard/balance/export.csv');
    assert.equal(page.status, 429, page.html.slice(0, 300));
    // The JSON statement is no download; the other environment has its own downloads.
    expectStatus(await t.request('GET', `${BALANCE}/statements/${month}`, { key }), 200);
    expectStatus(await t.request('GET', `${BALANCE}/transactions/export`, { key: business.keys.secretLive }), 200);

    // The server ends the stalled downloads after the stall time: their slots come back, all of
    // them, which the business sees as its downloads being taken again, up to the cap, at once.
    const probes: StalledDownload[] = [];
    let firstFreedAt = 0;
    const deadline = Date.now() + 120_000;
    while (probes.length < PER_BUSINESS) {
      const probe = await stalledDownload(t.baseUrl, `${BALANCE}/transactions/export`, auth());
      if (probe.status === 200) {
        probes.push(probe);
        firstFreedAt ||= Date.now();
        continue;
      }
      assert.equal(probe.status, 429, probe.head);
      probe.close();
      assert.ok(Date.now() < deadline, 'the stalled downloads still hold their slots after 2 minutes');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(firstFreedAt - opened >= STALL_SECONDS * 1000 - 50, `freed after ${firstFreedAt - opened} ms`);
    // Read on, each stalled client gets what was in the buffers, then the end of a cut file.
    for (const download of stalled) {
      const raw = await download.readRest();
      assert.ok(!complete(raw), 'a stalled download was ended, not finished');
      assert.ok(raw.length < 15_000_000, `${raw.length} bytes reached a client that read nothing`);
    }
    for (const probe of probes) probe.close();
  });

  test('a client that pauses for less than the stall time, then reads on, gets the whole file', async () => {
    const paused = await stalledDownload(t.baseUrl, `${BALANCE}/transactions/export`, {
      ...auth(),
      Connection: 'close',
    });
    assert.equal(paused.status, 200, paused.head);
    await new Promise((resolve) => setTimeout(resolve, (STALL_SECONDS * 1000) / 2));
    const raw = await paused.readRest();
    assert.ok(complete(raw), 'the file ends with its last chunk');
    const lines = raw.toString('latin1').match(/txn_stall\d{7},/g) ?? [];
    assert.equal(lines.length, ROWS);
  });

  test('a bad filter or period answers its 400 and takes no slot', async () => {
    for (let i = 0; i < PER_BUSINESS + 1; i++) {
      expectError(
        await t.request('GET', `${BALANCE}/transactions/export?from=2026-02-01&to=2026-01-01`, { key }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await t.request('GET', `${BALANCE}/statements/2026-13?format=csv`, { key }),
        400,
        'STATEMENT_PERIOD_INVALID',
      );
    }
    const file = await t.request('GET', `${BALANCE}/statements/${month}?format=csv`, { key });
    expectStatus(file, 200);
    // A statement covers the whole balance of its period: the list's `type` and `source` are not its filters.
    expectError(
      await t.request('GET', `${BALANCE}/statements/${month}?format=csv&type=payment`, { key }),
      400,
      'VALIDATION_ERROR',
    );
  });
});
