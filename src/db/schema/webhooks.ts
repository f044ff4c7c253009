import { sql, type Generated, type RawBuilder } from 'kysely';
import type { CreatedAt, Environment } from './columns.js';

/** Every status of a webhook delivery: the one list the table type, schemas and filters derive from. */
export const DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'DEAD'] as const;

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Why a DEAD delivery gets no further attempt, kept on the delivery (`deadReason`) from the moment
 * it dies until a retry or a recover brings it back: its 8 attempts failed, or its endpoint was
 * disabled (by hand or for failing) or deleted while it waited.
 */
export const DEAD_REASONS = ['MAX_ATTEMPTS', 'ENDPOINT_DISABLED', 'ENDPOINT_DELETED'] as const;

export type DeadReason = (typeof DEAD_REASONS)[number];

/**
 * The statuses of a delivery waiting for an attempt: PENDING (none yet) and FAILED (the last one
 * failed, the next is scheduled). Only these have a next attempt (`nextAttemptAt`); a claim takes
 * only these, and the partial indexes cover them. SUCCEEDED and DEAD are final.
 */
export const WAITING_STATUSES = ['PENDING', 'FAILED'] as const satisfies readonly DeliveryStatus[];

/**
 * WAITING_STATUSES as SQL literals, for `status IN (...)`: literals, not parameters, so the partial
 * indexes on `status IN ('PENDING', 'FAILED')` still match the statement.
 */
export function waitingStatuses(): RawBuilder<unknown> {
  return sql.join(WAITING_STATUSES.map((status) => sql.lit(status)));
}

/**
 * The status a new delivery is inserted with (the fan-out, a ping, the `endpoint.disabled`
 * notice: not transitions), and where a retry or a recover starts a fresh schedule.
 */
export const NEW_STATUS = 'PENDING' satisfies DeliveryStatus;

export type SignatureScheme = 'commerce' | 'standard';
export type EndpointDisabledReason = 'FAILING' | 'MANUAL';

export interface WebhookEndpointsTable {
  id: string;
  business_id: string;
  environment: Environment;
  url: string;
  events: string[];
  active: Generated<boolean>;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  deleted_at: Date | null;
  signature_scheme: Generated<SignatureScheme>;
  max_per_second: Generated<number | null>;
  rate_window_at: Generated<Date | null>;
  rate_window_count: Generated<number>;
  failing_since: Generated<Date | null>;
  disable_warned_at: Generated<Date | null>;
  disabled_at: Generated<Date | null>;
  disabled_reason: Generated<EndpointDisabledReason | null>;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  business_id: string;
  environment: Environment;
  event: string;
  status: DeliveryStatus;
  attempt_count: Generated<number>;
  attempts_total: Generated<number>;
  next_attempt_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  /** Set exactly while the status is DEAD (a check constraint holds them together). */
  dead_reason: Generated<DeadReason | null>;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  error_class: string | null;
  request_headers: Record<string, string> | null;
  response_headers: Record<string, string> | null;
  /** Up to 4 KB of the answer. */
  response_body: string | null;
}

export interface WebhookAttemptRollupsTable {
  endpoint_id: string;
  hour: Date;
  outcome: string;
  latency_bucket: number;
  attempts: number;
  last_error: string | null;
  last_error_at: Date | null;
  last_status_code: number | null;
}
