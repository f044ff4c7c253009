import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { MAX_ATTEMPTS } from '../../src/modules/webhooks/delivery/retry-schedule.js';
import {
  assertDeliveryAction,
  DELIVERY_STATUSES,
  deliveryActions,
  fromStatuses,
  fromStatusesOf,
  isDeliveryActionAllowed,
  OUTCOME_ACTIONS,
  outcomeAction,
  toStatus,
  WAITING_STATUS,
  type DeliveryAction,
  type DeliveryStatus,
} from '../../src/modules/webhooks/delivery-state.js';

describe('the delivery transition table', () => {
  test('each action from each status: allowed, and where it leads', () => {
    const expected: Record<DeliveryAction, Partial<Record<DeliveryStatus, DeliveryStatus>>> = {
      attempt: { PENDING: 'PENDING' },
      release: { PENDING: 'PENDING' },
      succeed: { PENDING: 'SUCCEEDED' },
      fail: { PENDING: 'PENDING' },
      exhaust: { PENDING: 'DEAD' },
      retry: { PENDING: 'PENDING', SUCCEEDED: 'PENDING', FAILED: 'PENDING', DEAD: 'PENDING' },
      recover: { FAILED: 'PENDING', DEAD: 'PENDING' },
      endpointDisabled: { PENDING: 'FAILED' },
      endpointDeleted: { PENDING: 'DEAD' },
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

  test('finished deliveries change only by a retry or a recover', () => {
    for (const status of ['SUCCEEDED', 'FAILED', 'DEAD'] as const) {
      const allowed = (Object.keys(deliveryActions) as DeliveryAction[]).filter((action) =>
        isDeliveryActionAllowed(status, action),
      );
      assert.deepEqual(allowed, status === 'SUCCEEDED' ? ['retry'] : ['retry', 'recover']);
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
    // What a claim takes is what a delivery is created with, the status the partial indexes cover.
    assert.deepEqual(deliveryActions.attempt.from, [WAITING_STATUS]);
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
    assert.equal(text(sql`status IN (${fromStatuses('recover')})`), `status IN ('FAILED', 'DEAD')`);
    assert.equal(text(sql`status = ${toStatus('exhaust')}`), `status = 'DEAD'`);
    assert.equal(
      text(fromStatusesOf(sql.ref('d.status'), sql.ref('x.action'), OUTCOME_ACTIONS)),
      `CASE "x"."action" WHEN 'succeed' THEN "d"."status" IN ('PENDING') WHEN 'fail' THEN "d"."status" IN ('PENDING') ` +
        `WHEN 'exhaust' THEN "d"."status" IN ('PENDING') END`,
    );
  });
});
