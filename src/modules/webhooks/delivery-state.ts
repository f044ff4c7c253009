import { sql, type RawBuilder } from 'kysely';
import { defineStateMachine } from '../../lib/state-machine.js';
import { MAX_ATTEMPTS } from './delivery/retry-schedule.js';
import {
  DELIVERY_STATUSES,
  NEW_STATUS,
  WAITING_STATUSES,
  type DeadReason,
  type DeliveryStatus,
} from '../../db/schema/webhooks.js';

/** The columns' vocabularies live beside their table (db/schema/webhooks.ts): the schema reads nothing above db. */
export {
  DEAD_REASONS,
  DELIVERY_STATUSES,
  NEW_STATUS,
  WAITING_STATUSES,
  waitingStatuses,
  type DeadReason,
  type DeliveryStatus,
} from '../../db/schema/webhooks.js';

interface DeliveryTransition {
  from: readonly DeliveryStatus[];
  to: DeliveryStatus | null;
  /** For the actions that lead to DEAD: the reason written on the delivery. */
  deadReason?: DeadReason;
}

/**
 * The delivery state machine, as the one definition the engine, the log's retry and recover, and
 * the endpoint edits ask: what each action may start from and where it leads (`null`: the status
 * stays), and for the actions that lead to DEAD the reason written on the delivery. A claim counts
 * an attempt and leases the delivery without changing its status; a worker stopping gives back
 * what it claimed but did not send. An attempt's outcome succeeds, fails (FAILED, its next attempt
 * scheduled) or exhausts the schedule (DEAD). A manual retry starts from anything: a waiting
 * delivery is due at once (`hasten`), a finished one starts a fresh schedule (`retry`); a recover
 * brings back what died. Disabling an endpoint (by hand or for failing) or deleting it ends its
 * waiting deliveries DEAD, since no attempt will follow. Deliveries change in set-based statements
 * that select their rows by the actions' `from` (`sqlFilter`); a refusal is a bug, not a caller's
 * mistake.
 */
export const deliveryMachine = defineStateMachine({
  statuses: DELIVERY_STATUSES,
  initial: NEW_STATUS,
  actions: {
    attempt: { from: WAITING_STATUSES, to: null },
    release: { from: WAITING_STATUSES, to: null },
    succeed: { from: WAITING_STATUSES, to: 'SUCCEEDED' },
    fail: { from: WAITING_STATUSES, to: 'FAILED' },
    exhaust: { from: WAITING_STATUSES, to: 'DEAD', deadReason: 'MAX_ATTEMPTS' },
    hasten: { from: WAITING_STATUSES, to: null },
    retry: { from: ['SUCCEEDED', 'DEAD'], to: NEW_STATUS },
    recover: { from: ['DEAD'], to: NEW_STATUS },
    // Retention deletes a finished delivery with its attempts (webhooks/retention.ts): the row goes.
    purge: { from: ['SUCCEEDED', 'DEAD'], to: null },
    endpointDisabled: { from: WAITING_STATUSES, to: 'DEAD', deadReason: 'ENDPOINT_DISABLED' },
    endpointDeleted: { from: WAITING_STATUSES, to: 'DEAD', deadReason: 'ENDPOINT_DELETED' },
  },
  refuse: (delivery, action) => new Error(`a delivery cannot ${action} from ${delivery.status}`),
});

export const deliveryActions = deliveryMachine.actions satisfies Record<string, DeliveryTransition>;

export type DeliveryAction = keyof typeof deliveryActions;

/** The actions that record an attempt's outcome (`outcomeAction`). */
export const OUTCOME_ACTIONS = ['succeed', 'fail', 'exhaust'] as const satisfies readonly DeliveryAction[];

export type OutcomeAction = (typeof OUTCOME_ACTIONS)[number];

/** What ends a delivery's wait when its endpoint goes away. */
export type EndpointEnd = 'endpointDisabled' | 'endpointDeleted';

export function isWaiting(status: DeliveryStatus): boolean {
  return (WAITING_STATUSES as readonly DeliveryStatus[]).includes(status);
}

export function isDeliveryActionAllowed(status: DeliveryStatus, action: DeliveryAction): boolean {
  return deliveryMachine.isAllowed({ status }, action);
}

/** The status `action` leads to from `status`; a refusal is thrown as a bug. */
export function assertDeliveryAction(status: DeliveryStatus, action: DeliveryAction): DeliveryStatus {
  return deliveryMachine.assert({ status }, action);
}

/** The reason a DEAD delivery carries after `action` (null for every action that does not kill it). */
export function deadReasonOf(action: DeliveryAction): DeadReason | null {
  const transition: DeliveryTransition = deliveryActions[action];
  return transition.deadReason ?? null;
}

/** What an attempt's outcome does to its delivery: the attempt number that ends the schedule is MAX_ATTEMPTS. */
export function outcomeAction(succeeded: boolean, attemptCount: number): OutcomeAction {
  if (succeeded) return 'succeed';
  return attemptCount >= MAX_ATTEMPTS ? 'exhaust' : 'fail';
}

/** The statuses, as SQL literals for `status IN (...)`. */
function literals(statuses: readonly DeliveryStatus[]): RawBuilder<unknown> {
  return sql.join(statuses.map((status) => sql.lit(status)));
}

/**
 * The statuses `action` starts from as SQL literals, for `status IN (...)`: literals, not
 * parameters, so the partial indexes on `status IN ('PENDING', 'FAILED')` still match the statement.
 */
export function fromStatuses(action: DeliveryAction): RawBuilder<unknown> {
  return literals(deliveryMachine.fromStatuses(action));
}

/** The status `action` leads to, as an SQL literal (an action that keeps the status has none). */
export function toStatus(action: DeliveryAction): RawBuilder<unknown> {
  const to = deliveryActions[action].to;
  if (to === null) throw new Error(`${action} keeps the status of a delivery`);
  return sql.lit(to);
}

/**
 * For a statement that moves each row by its own action (named in `action`, one of `actions`):
 * true where the row's `status` is one its action starts from, null for any other action, as
 * `CASE action WHEN 'succeed' THEN status IN ('PENDING', 'FAILED') ... END` (literals, like `fromStatuses`).
 */
export function fromStatusesOf(
  status: RawBuilder<unknown>,
  action: RawBuilder<unknown>,
  actions: readonly DeliveryAction[],
): RawBuilder<boolean> {
  const cases = actions.map((each) => sql`WHEN ${sql.lit(each)} THEN ${status} IN (${fromStatuses(each)})`);
  return sql<boolean>`CASE ${action} ${sql.join(cases, sql` `)} END`;
}
