import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { foldListCounts } from '../../src/db/counted-list.js';
import { act, createIntent, INTENTS } from '../intents/support.js';
import { ORDERS } from '../orders/support.js';
import { createProduct, PRODUCTS, write } from '../products/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';

/**
 * The exact list totals come from counts that triggers keep in the writing transaction
 * (migration 018, src/db/counted-list.ts). These tests compare every kept count with the same
 * count made from the rows, after racing writers and with the worker's fold racing them too, and
 * walk deep pages and date ranges against a plain query.
 */

type Counts = Map<string, number>;

/** Every count the triggers keep, summed over slots (zeros dropped). */
async function keptCounts(t: TestApp): Promise<{ lists: Counts; volume: Counts }> {
  const lists = await sql<{ key: string; n: string }>`
    SELECT concat_ws('|', list, business_id, environment, day::text, status) AS key, sum(n)::bigint AS n
    FROM list_counts GROUP BY 1 HAVING sum(n) <> 0`.execute(t.runtime.db);
  const volume = await sql<{ key: string; n: string }>`
    SELECT concat_ws('|', business_id, environment, day::text, sum(n)::text) AS key, sum(amount)::bigint AS n
    FROM paid_volume_days GROUP BY business_id, environment, day HAVING sum(n) <> 0`.execute(t.runtime.db);
  return {
    lists: new Map(lists.rows.map((row) => [row.key, Number(row.n)])),
    volume: new Map(volume.rows.map((row) => [row.key, Number(row.n)])),
  };
}

/** The same counts, made from the rows themselves. */
async function countedFromRows(t: TestApp): Promise<{ lists: Counts; volume: Counts }> {
  const day = sql`(created_at AT TIME ZONE 'UTC')::date::text`;
  const lists = await sql<{ key: string; n: string }>`
    SELECT concat_ws('|', list, business_id, environment, day, status) AS key, n FROM (
      SELECT 'intents' AS list, business_id, environment, ${day} AS day, status, count(*) AS n
        FROM payment_intents GROUP BY 2, 3, 4, 5
      UNION ALL
      SELECT 'orders', business_id, environment, ${day}, status, count(*) FROM orders GROUP BY 2, 3, 4, 5
      UNION ALL
      SELECT 'products', business_id, environment, ${day},
        CASE WHEN deleted_at IS NULL THEN status ELSE 'DELETED' END, count(*) FROM products GROUP BY 2, 3, 4, 5
      UNION ALL
      SELECT 'deliveries', business_id, environment, ${day}, status, count(*) FROM webhook_deliveries GROUP BY 2, 3, 4, 5
      UNION ALL
      SELECT 'balance', business_id, environment, ${day}, type, count(*) FROM balance_transactions GROUP BY 2, 3, 4, 5
      UNION ALL
      SELECT 'events', business_id, environment, ${day}, event, count(*) FROM events GROUP BY 2, 3, 4, 5
      UNION ALL
      SELECT 'delivery events', business_id, environment, ${day}, status || ' ' || event, count(*)
        FROM webhook_deliveries GROUP BY 2, 3, 4, 5
    ) AS counted`.execute(t.runtime.db);
  const volume = await sql<{ key: string; n: string }>`
    SELECT concat_ws('|', business_id, environment, (paid_at AT TIME ZONE 'UTC')::date::text, count(*)::text) AS key,
      sum(amount_paid)::bigint AS n
    FROM payment_intents WHERE paid_at IS NOT NULL GROUP BY business_id, environment, (paid_at AT TIME ZONE 'UTC')::date`.execute(
    t.runtime.db,
  );
  return {
    lists: new Map(lists.rows.map((row) => [row.key, Number(row.n)])),
    volume: new Map(volume.rows.map((row) => [row.key, Number(row.n)])),
  };
}

async function assertCountsExact(t: TestApp): Promise<void> {
  const [kept, actual] = [await keptCounts(t), await countedFromRows(t)];
  assert.deepEqual([...kept.lists].sort(), [...actual.lists].sort(), 'list counts match the rows');
  assert.deepEqual([...kept.volume].sort(), [...actual.volume].sort(), 'paid volume per day matches the rows');
}

/** Runs the worker's fold again and again until `until` settles (a writer racing the fold). */
async function foldWhile<T>(t: TestApp, work: Promise<T>): Promise<T> {
  let done = false;
  const folding = (async () => {
    let folds = 0;
    while (!done || folds === 0) {
      await foldListCounts(t.runtime.db, 7);
      folds++;
      // PGlite answers through microtasks only: let the HTTP requests in between folds.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return folds;
  })();
  try {
    return await work;
  } finally {
    done = true;
    await folding;
  }
}

const refsOf = (response: { body: { data: { items: { referenceNumber: string }[] } } }) =>
  response.body.data.items.map((item) => item.referenceNumber);

describe('exact list totals kept by the writes (issue 14, item 1)', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' } });
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  test('racing creates, payments, cancels and refunds, with the fold racing them, leave every count exact', async () => {
    const sk = business.keys.secretTest;
    const intents = await foldWhile(
      t,
      Promise.all(Array.from({ length: 30 }, (_, i) => createIntent(t, sk, { amount: 1000 + i }))),
    );
    const refs = intents.map((intent: { referenceNumber: string }) => intent.referenceNumber);
    const acted = await foldWhile(
      t,
      Promise.all([
        ...refs.slice(0, 12).map((ref) => act(t, sk, ref, 'simulate')),
        ...refs.slice(20, 23).map((ref) => act(t, sk, ref, 'simulate', { outcome: 'failure' })),
        ...refs.slice(12, 20).map((ref) => act(t, sk, ref, 'cancel')),
        // The same intents again, at once: each resolves one way, and is counted once.
        ...refs.slice(12, 16).map((ref) => act(t, sk, ref, 'simulate')),
      ]),
    );
    const succeeded = acted.filter((response) => response.status === 200).length;
    assert.equal(succeeded, 12 + 3 + 8, 'every intent is paid, failed or cancelled once');
    const refunded = await foldWhile(
      t,
      Promise.all([
        ...refs.slice(0, 6).map((ref) => act(t, sk, ref, 'refund', { amount: 500, reason: 'partial' })),
        ...refs.slice(6, 9).map((ref) => act(t, sk, ref, 'refund', { reason: 'whole' })),
      ]),
    );
    for (const response of refunded) expectStatus(response, 200);
    await assertCountsExact(t);

    for (const status of ['PENDING', 'PAID', 'CANCELLED', 'REFUNDED', 'FAILED'] as const) {
      const listed = await t.request('GET', `${INTENTS}?status=${status}&limit=100`, { key: sk });
      expectStatus(listed, 200);
      const rows = await t.runtime.db
        .selectFrom('payment_intents')
        .select('reference_number')
        .where('business_id', '=', business.id)
        .where('environment', '=', 'test')
        .where('status', '=', status)
        .execute();
      assert.equal(listed.body.data.total, rows.length, `total of ${status}`);
      assert.ok(rows.length > 0, `some intents are ${status}`);
      assert.deepEqual(refsOf(listed).sort(), rows.map((row) => row.reference_number).sort());
    }
    const all = await t.request('GET', `${INTENTS}?limit=1`, { key: sk });
    assert.equal(all.body.data.total, 30);

    // Folding everything leaves the sums as they were, in one row per day and status.
    while ((await foldListCounts(t.runtime.db)) > 0);
    const unfolded = await sql<{ n: number }>`SELECT count(*)::int AS n FROM list_counts WHERE slot <> 0`.execute(
      t.runtime.db,
    );
    assert.equal(unfolded.rows[0]!.n, 0);
    await assertCountsExact(t);
  });

  test('deep pages, status filters and date ranges over many days match a plain query, at day edges too', async () => {
    const other = await t.createBusiness();
    const sk = other.keys.secretTest;
    const refs: string[] = [];
    for (let i = 0; i < 45; i++) refs.push((await createIntent(t, sk, { amount: 100 + i })).referenceNumber);
    for (const ref of refs.slice(0, 9)) expectStatus(await act(t, sk, ref, 'cancel'), 200);
    // Seven days, several rows on the very first and last microsecond of a day, some at one time.
    const dayStart = Date.parse('2026-05-10T00:00:00.000Z');
    const times = refs.map((_, i) => {
      const day = dayStart + (i % 7) * 86_400_000;
      if (i % 5 === 0) return `${new Date(day).toISOString().slice(0, 10)} 00:00:00+00`;
      if (i % 5 === 1) return `${new Date(day).toISOString().slice(0, 10)} 23:59:59.999999+00`;
      if (i % 5 === 2) return `${new Date(day).toISOString().slice(0, 10)} 12:00:00+00`;
      return new Date(day + (i % 13) * 3_600_000 + i * 1000).toISOString();
    });
    for (const [i, ref] of refs.entries()) {
      await sql`UPDATE payment_intents SET created_at = ${times[i]}::timestamptz WHERE reference_number = ${ref}`.execute(
        t.runtime.db,
      );
    }
    await assertCountsExact(t);

    const expected = async (status: string | undefined, from: string | undefined, to: string | undefined) => {
      const rows = await sql<{ reference_number: string }>`
        SELECT reference_number FROM payment_intents
        WHERE business_id = ${other.id} AND environment = 'test'
          AND (${status ?? null}::text IS NULL OR status = ${status ?? null}::text)
          AND (${from ?? null}::timestamptz IS NULL OR created_at >= ${from ?? null}::timestamptz)
          AND (${to ?? null}::timestamptz IS NULL OR created_at <= ${to ?? null}::timestamptz)
        ORDER BY created_at DESC, reference_number DESC`.execute(t.runtime.db);
      return rows.rows.map((row) => row.reference_number);
    };
    const ranges: [string | undefined, string | undefined][] = [
      [undefined, undefined],
      ['2026-05-11', '2026-05-14'],
      ['2026-05-11T12:00:00.000Z', '2026-05-15T12:00:00.000Z'],
      ['2026-05-12T00:00:00.000Z', '2026-05-12T23:59:59.999Z'],
      ['2026-05-12T06:00:00.000Z', '2026-05-12T18:00:00.000Z'],
      [undefined, '2026-05-13T00:00:00.000Z'],
      ['2026-05-13', undefined],
      ['2026-05-20', undefined],
    ];
    // A range that ends before it starts is refused (decisions "Lists and exports"), never counted.
    const inverted = new URLSearchParams({ from: '2026-05-14T00:00:00.000Z', to: '2026-05-11T00:00:00.000Z' });
    expectStatus(await t.request('GET', `${INTENTS}?${inverted}`, { key: sk }), 400);
    for (const status of [undefined, 'PENDING', 'CANCELLED']) {
      for (const [from, to] of ranges) {
        const want = await expected(
          status,
          from && from.length === 10 ? `${from}T00:00:00.000Z` : from,
          to && to.length === 10 ? `${to}T23:59:59.999Z` : to,
        );
        for (const limit of [5, 100]) {
          const got: string[] = [];
          for (let page = 1; page <= Math.ceil(want.length / limit) + 1; page++) {
            const query = new URLSearchParams({ limit: String(limit), page: String(page) });
            if (status) query.set('status', status);
            if (from) query.set('from', from);
            if (to) query.set('to', to);
            const listed = await t.request('GET', `${INTENTS}?${query}`, { key: sk });
            expectStatus(listed, 200);
            assert.equal(listed.body.data.total, want.length, `total ${status} ${from}..${to}`);
            got.push(...refsOf(listed));
          }
          assert.deepEqual(got, want, `pages of ${limit}, ${status ?? 'any status'}, ${from}..${to}`);
        }
      }
    }
  });

  test('products (disabled, deleted), orders and webhook deliveries keep exact totals too', async () => {
    const shop = await t.createBusiness();
    const sk = shop.keys.secretTest;
    const endpoint = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
      key: sk,
      idempotencyKey: true,
      body: { url: 'http://127.0.0.1:9/hook', events: ['payment.created', 'order.new'] },
    });
    expectStatus(endpoint, 201);
    const products: { id: string }[] = [];
    for (let i = 0; i < 6; i++) {
      products.push(await createProduct(t, sk, { name: `Item ${i}`, price: 100 + i, status: 'ACTIVE', quantity: 50 }));
    }
    expectStatus(await write(t, sk, 'PATCH', `/${products[0]!.id}`, { status: 'DISABLED' }), 200);
    expectStatus(await write(t, sk, 'DELETE', `/${products[1]!.id}`), 200);
    await foldWhile(
      t,
      Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          t.request('POST', `${ORDERS}/simulate`, {
            key: sk,
            idempotencyKey: true,
            body: { items: [{ productId: products[2 + (i % 4)]!.id, quantity: 1 }], customerName: 'Aicha' },
          }),
        ),
      ),
    );
    for (let i = 0; i < 3; i++) await createIntent(t, sk, { amount: 700 + i });
    await sql`UPDATE webhook_deliveries SET status = 'DEAD', dead_reason = 'MAX_ATTEMPTS' WHERE id IN (
      SELECT id FROM webhook_deliveries WHERE business_id = ${shop.id} ORDER BY id LIMIT 2)`.execute(t.runtime.db);
    await assertCountsExact(t);

    const total = async (path: string) => {
      const listed = await t.request('GET', path, { key: sk });
      expectStatus(listed, 200);
      return listed.body.data.total as number;
    };
    const rows = async (table: 'products' | 'orders' | 'webhook_deliveries', where = sql`true`) =>
      Number(
        (
          await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)}
            WHERE business_id = ${shop.id} AND environment = 'test' AND ${where}`.execute(t.runtime.db)
        ).rows[0]!.n,
      );
    assert.equal(await total(PRODUCTS), 5, 'the deleted product is not listed');
    assert.equal(await total(`${PRODUCTS}?status=DISABLED`), 1);
    assert.equal(await total(`${PRODUCTS}?status=ACTIVE`), 4);
    assert.equal(await total(ORDERS), await rows('orders'));
    assert.equal(await total(ORDERS), 5);
    assert.equal(await total(`${ORDERS}?status=NEW`), await rows('orders', sql`status = 'NEW'`));
    const deliveries = '/api/v1/dev/webhooks/events';
    assert.equal(await total(deliveries), await rows('webhook_deliveries'));
    assert.equal(await total(deliveries), 8);
    assert.equal(await total(`${deliveries}?status=DEAD`), 2);
    assert.equal(await total(`${deliveries}?status=PENDING`), 6);
  });
});
