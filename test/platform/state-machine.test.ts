/**
 * Issue 48: one state-machine dialect. The generic machine (src/lib/state-machine.ts) answers
 * `decide`, `isAllowed`, `assert` and the SQL filter from one definition, and every module's
 * machine names only its own statuses and reaches each of them.
 */
import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { defineStateMachine } from '../../src/lib/state-machine.js';
import { INTENT_STATUSES, intentMachine } from '../../src/modules/intents/state.js';
import { ORDER_STATUSES, orderMachine } from '../../src/modules/orders/state.js';
import { PAYOUT_STATUSES, payoutMachine } from '../../src/modules/payouts/state.js';
import { PAYMENT_STATUSES, paymentMachine } from '../../src/modules/payments/state.js';
import { DELIVERY_STATUSES, deliveryMachine } from '../../src/modules/webhooks/delivery-state.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

class Refusal extends Error {}

const DOOR_STATUSES = ['OPEN', 'HELD', 'CLOSED'] as const;

interface Door {
  status: (typeof DOOR_STATUSES)[number];
  inside: number;
}

/** A door: opened, held, closed; closing needs nothing left inside, and knocking changes nothing. */
const door = defineStateMachine({
  statuses: DOOR_STATUSES,
  initial: 'OPEN',
  actions: {
    hold: { from: ['OPEN'], to: 'HELD' },
    close: {
      from: ['OPEN', 'HELD'],
      to: 'CLOSED',
      label: 'Close',
      guard: (door: Door, now: Date) =>
        door.inside > 0 ? new Refusal(`${door.inside} inside at ${now.toISOString()}`) : undefined,
    },
    knock: { from: ['OPEN', 'HELD', 'CLOSED'], to: null },
  },
  refuse: (door, action) => new Refusal(`cannot ${action} a door that is ${door.status}`),
});

const compiler = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (kysely) => new PostgresIntrospector(kysely),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

describe('the generic state machine', () => {
  const now = new Date('2030-01-01T00:00:00Z');

  test('decide: the status an action leads to, or the refusal of a status it does not start from', () => {
    assert.deepEqual(door.decide({ status: 'OPEN', inside: 0 }, 'hold'), { allowed: true, to: 'HELD' });
    const refused = door.decide({ status: 'CLOSED', inside: 0 }, 'hold');
    assert.equal(refused.allowed, false);
    assert.ok(!refused.allowed && refused.refusal instanceof Refusal);
    assert.equal(!refused.allowed && refused.refusal.message, 'cannot hold a door that is CLOSED');
    assert.deepEqual(door.fromStatuses('close'), ['OPEN', 'HELD']);
    // What a module adds to an action rides along.
    assert.equal(door.actions.close.label, 'Close');
  });

  test('a guard refuses what the status allows, with the time it is asked at', () => {
    assert.deepEqual(door.decide({ status: 'HELD', inside: 0 }, 'close', now), { allowed: true, to: 'CLOSED' });
    const refused = door.decide({ status: 'HELD', inside: 2 }, 'close', now);
    assert.equal(!refused.allowed && refused.refusal.message, `2 inside at ${now.toISOString()}`);
    assert.equal(door.isAllowed({ status: 'HELD', inside: 2 }, 'close', now), false);
    assert.throws(() => door.assert({ status: 'HELD', inside: 2 }, 'close', now), /2 inside/);
    // The status is asked first: a closed door is refused as such, whatever its guard would say.
    assert.throws(() => door.assert({ status: 'CLOSED', inside: 2 }, 'close'), /cannot close a door that is CLOSED/);
  });

  test('`to: null` keeps the status, whichever it is', () => {
    for (const status of door.statuses) {
      assert.equal(door.assert({ status, inside: 0 }, 'knock'), status);
      assert.equal(door.isAllowed({ status, inside: 0 }, 'knock'), true);
    }
  });

  test('assert answers the status an allowed action leads to, and throws the refusal otherwise', () => {
    assert.equal(door.assert({ status: 'OPEN', inside: 0 }, 'close'), 'CLOSED');
    assert.throws(
      () => door.assert({ status: 'HELD', inside: 0 }, 'hold'),
      (error: unknown) => error instanceof Refusal && error.message === 'cannot hold a door that is HELD',
    );
  });

  test('sqlFilter: `status IN (...)` over what an action starts from, as literals', () => {
    const text = (query: ReturnType<typeof sql>) => {
      const compiled = query.compile(compiler);
      assert.deepEqual(compiled.parameters, [], 'literals, not parameters');
      return compiled.sql;
    };
    assert.equal(text(door.sqlFilter('close')), `"status" IN ('OPEN', 'HELD')`);
    assert.equal(text(door.sqlFilter('hold', 'd.status')), `"d"."status" IN ('OPEN')`);
  });
});

describe("the modules' machines", () => {
  const machines = [
    { name: 'intents', machine: intentMachine, statuses: INTENT_STATUSES },
    { name: 'orders', machine: orderMachine, statuses: ORDER_STATUSES },
    { name: 'payouts', machine: payoutMachine, statuses: PAYOUT_STATUSES },
    { name: 'deliveries', machine: deliveryMachine, statuses: DELIVERY_STATUSES },
    { name: 'payments', machine: paymentMachine, statuses: PAYMENT_STATUSES },
  ];

  test('each names only its own statuses', () => {
    for (const { name, machine, statuses } of machines) {
      assert.equal(machine.statuses, statuses, name);
      const own = new Set<string>(statuses);
      assert.ok(own.has(machine.initial), `${name}: initial ${machine.initial}`);
      for (const [action, { from, to }] of Object.entries(machine.actions)) {
        assert.ok(from.length > 0, `${name}.${action} starts from somewhere`);
        for (const status of from) assert.ok(own.has(status), `${name}.${action} from ${status}`);
        if (to !== null) assert.ok(own.has(to), `${name}.${action} to ${to}`);
      }
    }
  });

  test('each status is the initial one or reachable from it', () => {
    for (const { name, machine, statuses } of machines) {
      const reached = new Set<string>([machine.initial]);
      for (let grew = true; grew;) {
        grew = false;
        for (const { from, to } of Object.values(machine.actions)) {
          if (to !== null && !reached.has(to) && from.some((status: string) => reached.has(status))) {
            reached.add(to);
            grew = true;
          }
        }
      }
      assert.deepEqual(
        statuses.filter((status) => !reached.has(status)),
        [],
        `${name}: statuses no action reaches from ${machine.initial}`,
      );
    }
  });
});

describe('sqlFilter against the database', () => {
  let testDatabase: TestDatabase;
  beforeAll(async () => {
    testDatabase = await createTestDatabase();
  });
  afterAll(() => testDatabase?.drop());

  test('it picks the rows an action starts from', async () => {
    const { db } = testDatabase.database;
    const rows = await sql<{ status: string }>`
      SELECT t.status FROM (VALUES ('OPEN'), ('HELD'), ('CLOSED')) AS t (status)
      WHERE ${door.sqlFilter('close', 't.status')} ORDER BY t.status`.execute(db);
    assert.deepEqual(
      rows.rows.map((row) => row.status),
      ['HELD', 'OPEN'],
    );
  });

  test("it is the partial indexes' own predicate, so the planner uses them", async () => {
    const { db } = testDatabase.database;
    // Each with the partial indexes whose predicate is the action's `from`.
    const cases = [
      {
        index: /payment_intents_expiry_idx/,
        query: sql`SELECT id FROM payment_intents WHERE ${intentMachine.sqlFilter('expire')} AND expires_at <= now()`,
      },
      {
        index: /webhook_deliveries_(due|endpoint_waiting)_idx/,
        query: sql`SELECT id FROM webhook_deliveries
                   WHERE ${deliveryMachine.sqlFilter('attempt')} AND next_attempt_at <= now()`,
      },
      {
        index: /webhook_deliveries_endpoint_dead_idx/,
        query: sql`SELECT id FROM webhook_deliveries
                   WHERE ${deliveryMachine.sqlFilter('recover')} AND endpoint_id = 'we_x' ORDER BY created_at, id`,
      },
      {
        index: /payouts_pending_queue_idx/,
        query: sql`SELECT reference FROM payouts WHERE ${payoutMachine.sqlFilter('pay')}
                   ORDER BY business_id, environment, created_at, reference LIMIT 1`,
      },
    ];
    for (const { index, query } of cases) {
      const plan = await db.transaction().execute(async (trx) => {
        // An empty table is read whole cheaper than through any index: only the index is left to choose.
        await sql`SET LOCAL enable_seqscan = off`.execute(trx);
        return (await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${query}`.execute(trx)).rows
          .map((row) => row['QUERY PLAN'])
          .join('\n');
      });
      assert.match(plan, index, plan);
    }
  });
});
