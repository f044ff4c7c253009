import { sql, type RawBuilder } from 'kysely';
import { MAX_ATTEMPTS } from './delivery/retry-schedule.js';

/** Every status of a webhook delivery: the one list the table type, schemas and filters derive from. */
export const DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'DEAD'] as const;

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * The delivery state machine, as the one table the engine, the log's retry and recover, and the
 * endpoint edits ask: what each action may start from and where it leads. A claim counts an
 * attempt and leases the delivery without changing its status; a worker stopping gives back what
 * it claimed but did not send. An attempt's outcome succeeds, fails (waiting for its retry) or
 * exhausts the schedule. A manual retry starts from anything; a recover from what ended badly.
 * Auto-disabling a failing endpoint ends its waiting deliveries FAILED (a recover sends them
 * later), deleting it ends them DEAD (nowhere left to send them); disabling it by hand (PATCH
 * `active: false`) changes no delivery: they stay PENDING, and wait until it is active again.
 */
export const deliveryActions = {
  attempt: { from: ['PENDING'], to: 'PENDING' },
  release: { from: ['PENDING'], to: 'PENDING' },
  succeed: { from: ['PENDING'], to: 'SUCCEEDED' },
  fail: { from: ['PENDING'], to: 'PENDING' },
  exhaust: { from: ['PENDING'], to: 'DEAD' },
  retry: { from: DELIVERY_STATUSES, to: 'PENDING' },
  recover: { from: ['FAILED', 'DEAD'], to: 'PENDING' },
  endpointDisabled: { from: ['PENDING'], to: 'FAILED' },
  endpointDeleted: { from: ['PENDING'], to: 'DEAD' },
} as const satisfies Record<string, { from: readonly DeliveryStatus[]; to: DeliveryStatus }>;

export type DeliveryAction = keyof typeof deliveryActions;

/**
 * A delivery waiting for an attempt: the one status a claim takes (`attempt`'s `from`), the
 * status a new delivery is inserted with (the fan-out, a ping, the `endpoint.disabled` notice:
 * not transitions) and the one the partial indexes cover. Every other status is final: the
 * delivery has its `completed_at` and shows no next attempt.
 */
export const WAITING_STATUS = 'PENDING' satisfies DeliveryStatus;

/** The actions that record an attempt's outcome (`outcomeAction`). */
export const OUTCOME_ACTIONS = ['succeed', 'fail', 'exhaust'] as const satisfies readonly DeliveryAction[];

export type OutcomeAction = (typeof OUTCOME_ACTIONS)[number];

/** What ends a delivery's wait when its endpoint goes away. */
export type EndpointEnd = 'endpointDisabled' | 'endpointDeleted';

export function isDeliveryActionAllowed(status: DeliveryStatus, action: DeliveryAction): boolean {
  return (deliveryActions[action].from as readonly DeliveryStatus[]).includes(status);
}

/**
 * The status `action` leads to from `status`. Deliveries change in set-based statements that
 * select their rows by the table's `from`; a refusal here is a bug, not a caller's mistake.
 */
export function assertDeliveryAction(status: DeliveryStatus, action: DeliveryAction): DeliveryStatus {
  if (!isDeliveryActionAllowed(status, action)) throw new Error(`a delivery cannot ${action} from ${status}`);
  return deliveryActions[action].to;
}

/** What an attempt's outcome does to its delivery: the attempt number that ends the schedule is MAX_ATTEMPTS. */
export function outcomeAction(succeeded: boolean, attemptCount: number): OutcomeAction {
  if (succeeded) return 'succeed';
  return attemptCount >= MAX_ATTEMPTS ? 'exhaust' : 'fail';
}

/**
 * The statuses `action` starts from as SQL literals, for `status IN (...)`: literals, not
 * parameters, so the partial indexes on `status = 'PENDING'` still match the statement.
 */
export function fromStatuses(action: DeliveryAction): RawBuilder<unknown> {
  return sql.join(deliveryActions[action].from.map((status) => sql.lit(status)));
}

/** The status `action` leads to, as an SQL literal. */
export function toStatus(action: DeliveryAction): RawBuilder<unknown> {
  return sql.lit(deliveryActions[action].to);
}

/**
 * For a statement that moves each row by its own action (named in `action`, one of `actions`):
 * true where the row's `status` is one its action starts from, null for any other action, as
 * `CASE action WHEN 'succeed' THEN status IN ('PENDING') ... END` (literals, like `fromStatuses`).
 */
export function fromStatusesOf(
  status: RawBuilder<unknown>,
  action: RawBuilder<unknown>,
  actions: readonly DeliveryAction[],
): RawBuilder<boolean> {
  const cases = actions.map((each) => sql`WHEN ${sql.lit(each)} THEN ${status} IN (${fromStatuses(each)})`);
  return sql<boolean>`CASE ${action} ${sql.join(cases, sql` `)} END`;
}
