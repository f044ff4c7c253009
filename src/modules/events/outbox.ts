import { sql } from 'kysely';
import type { Environment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { newId } from '../../lib/ids.js';

/**
 * The transactional outbox. A state change and the event it causes are written by the same
 * transaction (the caller's executor); the worker delivers events after they commit.
 */
export interface EventRecord {
  id: string;
  businessId: string;
  environment: Environment;
  event: string;
  /** What the event is about (an intent reference, a product id...), for lookups and tests. */
  subject: string;
  /** The exact JSON text receivers get: deliveries sign these bytes. */
  body: string;
  createdAt: Date;
}

export function newEventId(): string {
  return newId('evt');
}

/**
 * The fan-out, as SQL: one PENDING delivery, due at once, per active endpoint of the event's
 * business and environment subscribed to it. `source` is any relation with the columns id,
 * business_id, environment, event and created_at (the events table, or a CTE that just inserted
 * into it), so every writer fans out in the transaction that writes the event.
 */
export function fanOutSql(source: string): string {
  return `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, business_id, environment, event, status,
      next_attempt_at, created_at, updated_at)
    SELECT 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ev.id, e.id, ev.business_id, ev.environment,
      ev.event, 'PENDING', ev.created_at, ev.created_at, ev.created_at
    FROM ${source} AS ev
    JOIN webhook_endpoints e ON e.business_id = ev.business_id AND e.environment = ev.environment
      AND e.active AND e.deleted_at IS NULL AND ev.event = ANY (e.events)`;
}

/** Writes events and their deliveries in the caller's transaction, in one statement. */
export async function recordEvents(executor: Executor, events: readonly EventRecord[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map(
    (record) =>
      sql`(${record.id}, ${record.businessId}, ${record.environment}, ${record.event}, ${record.subject}, ${record.body}, ${record.createdAt}::timestamptz)`,
  );
  await sql`
    WITH ev AS (
      INSERT INTO events (id, business_id, environment, event, subject, body, created_at)
      VALUES ${sql.join(rows)}
      RETURNING id, business_id, environment, event, created_at
    )
    ${sql.raw(fanOutSql('ev'))}`.execute(executor);
}
