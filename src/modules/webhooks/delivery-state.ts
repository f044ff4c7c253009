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
 * Disabling an endpoint ends its waiting deliveries FAILED (a recover sends them later),
 * deleting it ends them DEAD (nowhere left to send them).
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
export function outcomeAction(succeeded: boolean, attemptCount: number): 'succeed' | 'fail' | 'exhaust' {
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
