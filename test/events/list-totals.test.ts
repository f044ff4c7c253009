import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { foldListCounts } from '../../src/db/counted-list.js';
import { createMonthsAhead, dropMonthsPastRetention, monthStart } from '../../src/db/partitions.js';
import { readableEvents } from '../../src/modules/events/service.js';
import { allScopes, defaultScopes } from '../../src/modules/keys/scopes.js';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';

/**
 * Issue 55: the events list and the delivery log take their `total` from counts kept by triggers
 * (migration 058), not from counting the business's whole history. Every total and every page
 * here is compared with the same query made on the rows, for a key that reads every event, a
 * default secret key (no api_key events) and a key with some read scopes only.
 */

const EVENTS = '/api/v1/dev/events';
const DELIVERIES = '/api/v1/dev/webhooks/events';
const DAY = 86_400_000;
const NAMES = ['payment.created', 'payment.confirmed', 'order.new', 'api_key.rolled', 'seller.created', 'ping'];
const STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'];

describe('list totals from kept counts: events and webhook deliveries (issue 55)', () => {
  let t: TestApp;
  let business: TestBusiness;
  const keys: Record<'every' | 'default' | 'some', { key: string; scopes: readonly string[] }> = {
    every: { key: '', scopes: allScopes },
    default: { key: '', scopes: defaultScopes },
    some: { key: '', scopes: ['store.orders:read', 'webhooks:read'] },
  };
  const db = () => t.runtime.db;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    for (const name of ['every', 'default', 'some'] as const) {
      const response = await t.admin('POST', '/keys', {
        businessId: business.id,
        kind: 'secret',
        environment: 'test',
        scopes: [...keys[name].scopes],
      });
      expectStatus(response, 201);
      keys[name].key = response.body.data.key as string;
    }
    await sql`INSERT INTO webhook_endpoints (id, business_id, environment, url, events, secret)
      VALUES ('we_totals', ${business.id}, 'test', 'https://example.com/h', ${NAMES}::text[], 'whsec_t')`.execute(db());
    // Events and deliveries over several days (two statements a day, so two transactions' ids),
    // every name and status, some in live mode (never counted for a test key).
    for (let day = 0; day < 5; day++) {
      const at = new Date(Date.now() - day * DAY);
      for (const part of [0, 1]) {
        await sql`INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
          SELECT 'evt_tot_' || ${day} || '_' || ${part} || '_' || i, ${business.id},
            CASE WHEN i % 11 = 0 THEN 'live' ELSE 'test' END, (${NAMES}::text[])[1 + (i * 7 + ${day}) % 6],
            'pi_tot_' || (i % 4), '{}', ${at}::timestamptz + make_interval(secs => i), i
          FROM generate_series(1, 13 + ${day}) AS i`.execute(db());
      }
      await sql`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, business_id, environment, event, status,
          next_attempt_at, created_at, updated_at)
        SELECT 'whd_tot_' || e.id, e.id, 'we_totals', e.business_id, e.environment, e.event,
          (${STATUSES}::text[])[1 + abs(hashtext(e.id)) % 3], e.created_at, e.created_at, e.created_at
        FROM events e WHERE e.business_id = ${business.id} AND e.id LIKE ${`evt_tot_${day}_%`} AND e.event <> 'ping'`.execute(
        db(),
      );
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Every page of a list, with the totals each page answered. */
  async function walk(path: string, key: string, limit: number) {
    const ids: string[] = [];
    const totals = new Set<number>();
    for (let page = 1; page < 100; page++) {
      const separator = path.includes('?') ? '&' : '?';
      const response = await t.request('GET', `${path}${separator}page=${page}&limit=${limit}`, { key });
      expectStatus(response, 200);
      const data = response.body.data as { items: { id: string }[]; total: number };
      totals.add(data.total);
      ids.push(...data.items.map((item) => item.id));
      if (data.items.length < limit) break;
    }
    return { ids, totals: [...totals] };
  }

  function namesFor(scopes: readonly string[], type?: string): string[] {
    const readable: string[] = readableEvents(scopes);
    if (type?.endsWith('.*')) return readable.filter((name) => name.startsWith(type.slice(0, -1)));
    return type ? readable.filter((name) => name === type) : readable;
  }

  async function expectedEvents(names: string[]): Promise<string[]> {
    const { rows } = await sql<{ id: string }>`SELECT id FROM events
      WHERE business_id = ${business.id} AND environment = 'test' AND event = ANY (${names}::text[])
      ORDER BY txid DESC, seq DESC`.execute(db());
    return rows.map((row) => row.id);
  }

  async function expectedDeliveries(names: string[] | undefined, status?: string): Promise<string[]> {
    const { rows } = await sql<{ id: string }>`SELECT id FROM webhook_deliveries
      WHERE business_id = ${business.id} AND environment = 'test'
        AND (${names === undefined} OR event = ANY (${names ?? []}::text[]))
        AND (${status ?? null}::text IS NULL OR status = ${status ?? null})
      ORDER BY created_at DESC, id DESC`.execute(db());
    return rows.map((row) => row.id);
  }

  async function assertEventLists(): Promise<void> {
    for (const [name, { key, scopes }] of Object.entries(keys)) {
      for (const type of [undefined, 'payment.*', 'order.new', 'api_key.rolled', 'ping', 'nothing.*']) {
        const expected = await expectedEvents(namesFor(scopes, type));
        const listed = await walk(type ? `${EVENTS}?type=${type}` : EVENTS, key, 7);
        assert.deepEqual(listed.totals, [expected.length], `${name} key, type ${type}: total`);
        assert.deepEqual(listed.ids, expected, `${name} key, type ${type}: pages`);
      }
    }
  }

  async function assertDeliveryLists(): Promise<void> {
    for (const [name, { key, scopes }] of Object.entries(keys)) {
      const readable = scopes === allScopes ? undefined : namesFor(scopes);
      for (const [query, names, status] of [
        ['', readable, undefined],
        ['?status=FAILED', readable, undefined],
        ['?event=payment.created', namesFor(scopes, 'payment.created'), undefined],
        ['?event=order.new&status=SUCCEEDED', namesFor(scopes, 'order.new'), 'SUCCEEDED'],
      ] as const) {
        const expected = await expectedDeliveries(names, status ?? (query === '?status=FAILED' ? 'FAILED' : undefined));
        const listed = await walk(`${DELIVERIES}${query}`, key, 6);
        assert.deepEqual(listed.totals, [expected.length], `${name} key, deliveries${query}: total`);
        assert.deepEqual(listed.ids, expected, `${name} key, deliveries${query}: pages`);
      }
    }
  }

  test('events: totals and pages equal the rows for every key and type filter, folded or not', async () => {
    assert.ok((await expectedEvents(namesFor(allScopes))).length > 60);
    await assertEventLists();
    while ((await foldListCounts(db())) > 0);
    await assertEventLists();
  });

  test('deliveries: totals and pages equal the rows for keys reading every event, the default, some', async () => {
    await assertDeliveryLists();
    // Status changes of many rows in one statement move their counts; a delete takes them off.
    await sql`UPDATE webhook_deliveries SET status = 'FAILED' WHERE business_id = ${business.id}
      AND status = 'PENDING' AND event IN ('order.new', 'api_key.rolled')`.execute(db());
    await sql`DELETE FROM webhook_deliveries WHERE business_id = ${business.id} AND event = 'payment.confirmed'
      AND status = 'SUCCEEDED'`.execute(db());
    await assertDeliveryLists();
    while ((await foldListCounts(db())) > 0);
    await assertDeliveryLists();
  });

  test('a retention drop of an events month takes exactly that month off the total', async () => {
    const now = new Date();
    const gone = monthStart(now, -5);
    await createMonthsAhead(db(), gone);
    await sql`INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
      SELECT 'evt_gone_' || i, ${business.id}, 'test', (${NAMES}::text[])[1 + i % 6], 'pi_gone', '{}',
        CASE WHEN i = 40 THEN ${monthStart(gone, 1)}::timestamptz - interval '1 second'
          ELSE ${gone}::timestamptz + make_interval(hours => (i - 1) * 17) END, i
      FROM generate_series(1, 40) AS i`.execute(db());
    const total = async (key: string) => {
      const response = await t.request('GET', `${EVENTS}?limit=1`, { key });
      expectStatus(response, 200);
      return response.body.data.total as number;
    };
    const before = { every: await total(keys.every.key), some: await total(keys.some.key) };
    assert.equal(before.every, (await expectedEvents(namesFor(allScopes))).length);
    const goneOfSome = (await expectedEvents(namesFor(keys.some.scopes))).filter((id) => id.startsWith('evt_gone_'));

    const run = await dropMonthsPastRetention(db(), { eventDays: 90, webhookAttemptDays: 30 }, now);
    assert.ok(run.done.includes(`events ${gone.toISOString().slice(0, 7)}`), JSON.stringify(run));
    assert.equal(await total(keys.every.key), before.every - 40);
    assert.equal(await total(keys.some.key), before.some - goneOfSome.length);
    assert.ok(goneOfSome.length > 0);
    const { rows } = await sql<{ n: string }>`SELECT count(*)::bigint AS n FROM list_counts WHERE list = 'events'
      AND day >= ${gone.toISOString().slice(0, 10)}::date AND day < ${monthStart(gone, 1).toISOString().slice(0, 10)}::date`.execute(
      db(),
    );
    assert.equal(Number(rows[0]?.n), 0, 'no count of the dropped month is left');
    await assertEventLists();
    while ((await foldListCounts(db())) > 0);
    await assertEventLists();
    assert.deepEqual((await checkLedger(db())).problems, []);
  });
});
