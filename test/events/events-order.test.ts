import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { eventRecord } from '../../src/modules/events/outbox.js';
import { unitOfWork } from '../../src/modules/events/unit-of-work.js';
import { testDatabaseKind } from '../support/database.js';
import { expectStatus, startTestApp, waitUntil, type TestApp, type TestBusiness } from '../support/harness.js';

const EVENTS = '/api/v1/dev/events';

/**
 * Issue 47 item 13 (decision 028): `GET /dev/events` lists in the order the `after` cursor
 * follows, the order in which the events were committed, whatever their `createdAt`; newest
 * first is that order reversed, page by page.
 */
describe('the event list and the after cursor follow one order (issue 47 item 13)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t?.close());

  const scope = () => ({ businessId: business.id, environment: 'test' as const });
  /** `count` events of one kind, all with the same `createdAt` (data the test reads back, not a stock event's). */
  const batch = (label: string, count: number, createdAt: Date) =>
    Array.from({ length: count }, (_, n) =>
      eventRecord('product.stock_low', scope(), `prod_${label}_${n % 2}`, { label, n } as never, createdAt),
    );
  const labelOf = (event: any) => `${event.payload.data.label}${event.payload.data.n}`;

  async function page(query: string) {
    const response = await t.request('GET', `${EVENTS}?${query}`, { key: sk });
    expectStatus(response, 200);
    return response.body.data as { items: any[]; hasMore: boolean; total: number };
  }

  test('events sharing a createdAt, in one transaction and in two interleaved ones: newest first is the cursor walk reversed', async () => {
    const createdAt = new Date();
    await t.runtime.db.transaction().execute((trx) =>
      unitOfWork()
        .events(batch('anchor', 1, createdAt))
        .run(trx),
    );
    await t.runtime.db.transaction().execute(async (trx) => {
      // Two statements of one transaction, every event with the same createdAt.
      await unitOfWork()
        .events(batch('a', 3, createdAt))
        .run(trx);
      await unitOfWork()
        .events(batch('b', 2, createdAt))
        .run(trx);
    });
    if (testDatabaseKind === 'postgres') {
      // The first transaction takes its id before the second, and writes its events after the
      // second committed: it commits last, yet its events come first in the cursor's order, and
      // they were inserted last.
      let hasId!: () => void;
      const idTaken = new Promise<void>((resolve) => (hasId = resolve));
      let goOn!: () => void;
      const secondDone = new Promise<void>((resolve) => (goOn = resolve));
      const first = t.runtime.db.transaction().execute(async (trx) => {
        await sql`SELECT pg_current_xact_id()`.execute(trx);
        hasId();
        await secondDone;
        await unitOfWork()
          .events(batch('c', 3, createdAt))
          .run(trx);
      });
      await idTaken;
      await t.runtime.db.transaction().execute((trx) =>
        unitOfWork()
          .events(batch('d', 3, createdAt))
          .run(trx),
      );
      goOn();
      await first;
    }
    const written = testDatabaseKind === 'postgres' ? 11 : 5;

    const anchor = (await page('limit=100')).items.find((event) => labelOf(event) === 'anchor0');
    assert.ok(anchor);
    // The cursor's walk, two at a time, each page after the last event of the one before.
    const walked = await waitUntil(async () => {
      const seen: any[] = [];
      for (let after = anchor.id as string; ;) {
        const next = await page(`after=${after}&limit=2`);
        seen.push(...next.items);
        if (next.items.length === 0) break;
        after = next.items.at(-1).id;
      }
      return seen.length === written ? seen : undefined;
    }, 'every event past the anchor settled');
    // Newest first, two per page: the same events, in the reverse order.
    const newest: any[] = [];
    for (let n = 1; ; n++) {
      const next = await page(`page=${n}&limit=2`);
      newest.push(...next.items);
      if (!next.hasMore) break;
    }
    assert.equal(newest.length, written + 1);
    assert.deepEqual(
      newest.slice(0, written).map(labelOf).reverse(),
      walked.map(labelOf),
      'newest first is the cursor order reversed',
    );
    assert.ok(newest.every((event) => event.createdAt === createdAt.toISOString()));
    assert.deepEqual(walked.slice(0, 5).map(labelOf), ['a0', 'a1', 'a2', 'b0', 'b1']);
    if (testDatabaseKind === 'postgres') {
      // The transaction that took its id first comes first, though it inserted last.
      assert.deepEqual(walked.slice(5).map(labelOf), ['c0', 'c1', 'c2', 'd0', 'd1', 'd2']);
    }
  });
});
