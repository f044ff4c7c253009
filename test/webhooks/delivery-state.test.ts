import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { MAX_ATTEMPTS } from '../../src/modules/webhooks/delivery/retry-schedule.js';
import {
  assertDeliveryAction,
  deadReasonOf,
  DELIVERY_STATUSES,
  deliveryActions,
  fromStatuses,
  fromStatusesOf,
  isDeliveryActionAllowed,
  OUTCOME_ACTIONS,
  outcomeAction,
  NEW_STATUS,
  toStatus,
  WAITING_STATUSES,
  waitingStatuses,
  type DeliveryAction,
  type DeliveryStatus,
} from '../../src/modules/webhooks/delivery-state.js';

describe('the delivery transition table', () => {
  test('each action from each status: allowed, and where it leads', () => {
    const expected: Record<DeliveryAction, Partial<Record<DeliveryStatus, DeliveryStatus>>> = {
      attempt: { PENDING: 'PENDING', FAILED: 'FAILED' },
      release: { PENDING: 'PENDING', FAILED: 'FAILED' },
      succeed: { PENDING: 'SUCCEEDED', FAILED: 'SUCCEEDED' },
      fail: { PENDING: 'FAILED', FAILED: 'FAILED' },
      exhaust: { PENDING: 'DEAD', FAILED: 'DEAD' },
      hasten: { PENDING: 'PENDING', FAILED: 'FAILED' },
      retry: { SUCCEEDED: 'PENDING', DEAD: 'PENDING' },
      recover: { DEAD: 'PENDING' },
      purge: { SUCCEEDED: 'SUCCEEDED', DEAD: 'DEAD' },
      endpointDisabled: { PENDING: 'DEAD', FAILED: 'DEAD' },
      endpointDeleted: { PENDING: 'DEAD', FAILED: 'DEAD' },
    };
    assert.deepEqual(Object.keys(deliveryActions).sort(), Object.keys(expected).sort());
    for (const action of Object.keys(expected) as DeliveryAction[]) {
      for (const status of DELIVERY_STATUSES) {
        const to = expected[action][status];
        assert.equal(isDeliveryActionAllowed(status, action), to !== undefined, `${action} from ${status}`);
        if (to) assert.equal(assertDeliveryAction(status, action), to, `${action} from ${status}`);
        else assert.throws(() => assertDeliveryAction(status, action), new RegExp(`cannot ${action} from ${status}`));
      }
    }
  });

  test('finished deliveries change only by a retry or a recover (or go, by retention); every retry route action covers every status', () => {
    for (const status of ['SUCCEEDED', 'DEAD'] as const) {
      const allowed = (Object.keys(deliveryActions) as DeliveryAction[]).filter((action) =>
        isDeliveryActionAllowed(status, action),
      );
      assert.deepEqual(allowed, status === 'SUCCEEDED' ? ['retry', 'purge'] : ['retry', 'recover', 'purge']);
    }
    // The retry route takes any status: waiting ones are hastened, finished ones retried.
    for (const status of DELIVERY_STATUSES) {
      assert.equal(isDeliveryActionAllowed(status, 'hasten') !== isDeliveryActionAllowed(status, 'retry'), true);
    }
  });

  test('DEAD, and only DEAD, carries a reason, one per way of dying', () => {
    const dying = (Object.keys(deliveryActions) as DeliveryAction[]).filter(
      (action) => deliveryActions[action].to === 'DEAD',
    );
    assert.deepEqual(
      dying.map((action) => [action, deadReasonOf(action)]),
      [
        ['exhaust', 'MAX_ATTEMPTS'],
        ['endpointDisabled', 'ENDPOINT_DISABLED'],
        ['endpointDeleted', 'ENDPOINT_DELETED'],
      ],
    );
    for (const action of Object.keys(deliveryActions) as DeliveryAction[]) {
      if (!dying.includes(action)) assert.equal(deadReasonOf(action), null, action);
    }
  });

  test("an attempt's outcome: success, a failure with attempts left, the last failure", () => {
    assert.equal(outcomeAction(true, 1), 'succeed');
    assert.equal(outcomeAction(true, MAX_ATTEMPTS), 'succeed');
    assert.equal(outcomeAction(false, 1), 'fail');
    assert.equal(outcomeAction(false, MAX_ATTEMPTS - 1), 'fail');
    assert.equal(outcomeAction(false, MAX_ATTEMPTS), 'exhaust');
    assert.equal(deliveryActions[outcomeAction(false, MAX_ATTEMPTS)].to, 'DEAD');
  });

  test('the waiting status, the outcome actions and the SQL the statements take from the table', () => {
    // What a claim takes: a new delivery (PENDING) and a failed one waiting for its retry.
    assert.deepEqual(deliveryActions.attempt.from, WAITING_STATUSES);
    assert.ok((WAITING_STATUSES as readonly string[]).includes(NEW_STATUS));
    const outcomes = new Set([true, false].flatMap((ok) => [1, MAX_ATTEMPTS].map((n) => outcomeAction(ok, n))));
    assert.deepEqual([...outcomes].sort(), [...OUTCOME_ACTIONS].sort());

    const db = new Kysely<unknown>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (kysely) => new PostgresIntrospector(kysely),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
    const text = (query: ReturnType<typeof sql>) => {
      const compiled = query.compile(db);
      assert.deepEqual(compiled.parameters, [], 'literals, not parameters');
      return compiled.sql;
    };
    assert.equal(text(sql`status IN (${fromStatuses('recover')})`), `status IN ('DEAD')`);
    // The partial indexes' own predicate (migration 034), so the planner matches them.
    assert.equal(text(sql`status IN (${waitingStatuses()})`), `status IN ('PENDING', 'FAILED')`);
    assert.equal(text(sql`status = ${toStatus('exhaust')}`), `status = 'DEAD'`);
    assert.throws(() => toStatus('hasten'), /keeps the status/);
    const waiting = `"d"."status" IN ('PENDING', 'FAILED')`;
    assert.equal(
      text(fromStatusesOf(sql.ref('d.status'), sql.ref('x.action'), OUTCOME_ACTIONS)),
      `CASE "x"."action" WHEN 'succeed' THEN ${waiting} WHEN 'fail' THEN ${waiting} WHEN 'exhaust' THEN ${waiting} END`,
    );
  });
});
