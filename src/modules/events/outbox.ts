import { sql, type RawBuilder } from 'kysely';
import type { Static, TSchema } from 'typebox';
import type { Environment } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { NEW_STATUS } from '../../db/schema/webhooks.js';
import type { EventPayloads, OutboxEventName } from './catalog.js';
import { isMoneyEvent } from './envelopes.js';

/**
 * The transactional outbox. A state change and the event it causes are written by the same
 * transaction (the caller's executor); the worker delivers events after they commit.
 */
export interface EventRecord {
  id: string;
  businessId: string;
  environment: Environment;
  event: OutboxEventName;
  /** What the event is about (an intent reference, a product id...), for lookups and tests. */
  subject: string;
  /** The exact JSON text receivers get: deliveries sign these bytes. */
  body: string;
  createdAt: Date;
}

export function newEventId(): string {
  return newId('evt');
}

/** The data of an event, as its module's registered schema types it (`EventPayloads`). */
export type EventData<N extends OutboxEventName> = N extends keyof EventPayloads
  ? EventPayloads[N] extends TSchema
    ? Static<EventPayloads[N]>
    : never
  : never;

/**
 * The one way an event is made: its data typed by its name's schema, in its family's envelope
 * (`envelopes.ts`): `{ id, event, created_at | timestamp, sandbox, data }`, in that order, once:
 * the body text is what gets signed (the outbox appends `sequence`).
 */
export function eventRecord<N extends OutboxEventName>(
  event: N,
  owner: { businessId: string; environment: Environment },
  subject: string,
  // NoInfer: the name alone chooses the schema, so an extra field is refused rather than widening N.
  data: EventData<NoInfer<N>>,
  createdAt = new Date(),
): EventRecord {
  const id = newEventId();
  const at = createdAt.toISOString();
  const sandbox = owner.environment === 'test';
  const body = JSON.stringify(
    isMoneyEvent(event) ? { id, event, created_at: at, sandbox, data } : { id, event, timestamp: at, sandbox, data },
  );
  return { id, businessId: owner.businessId, environment: owner.environment, event, subject, body, createdAt };
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
      ev.event, '${NEW_STATUS}', ev.created_at, ev.created_at, ev.created_at
    FROM ${source} AS ev
    JOIN webhook_endpoints e ON e.business_id = ev.business_id AND e.environment = ev.environment
      AND e.active AND e.deleted_at IS NULL AND ev.event = ANY (e.events)`;
}

/**
 * The one way events are written, as CTEs of the caller's statement. `source` is a relation with
 * the columns id, business_id, environment, event, subject, body, created_at and ord (the order of
 * the events of one object within the statement). Each object's counter row is bumped once by the
 * count of its events, which numbers them (`sequence`) and appends the number to the body text as
 * the envelope's last field; racing writers of one object queue on that row. Counter rows are
 * taken in subject order, so two statements never lock two rows in opposite orders. The last
 * CTE, `ev`, has the columns the fan-out reads. `events: 'one'` when `source` holds at most one
 * row: its number is the counter itself, without the grouping and numbering the general case
 * needs (half the execution time of the event statement every payment and create runs).
 */
export function sequencedInsertSql(source: string, events: 'one' | 'many'): string {
  if (events === 'one') {
    return `ev_sequences AS (
      INSERT INTO event_sequences AS s (business_id, environment, subject, last_sequence)
      SELECT business_id, environment, subject, 1 FROM ${source}
      ON CONFLICT (business_id, environment, subject) DO UPDATE SET last_sequence = s.last_sequence + 1
      RETURNING last_sequence
    ),
    ev AS (
      INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
      SELECT i.id, i.business_id, i.environment, i.event, i.subject,
        left(i.body, -1) || ',"sequence":' || q.last_sequence::text || '}', i.created_at, q.last_sequence
      FROM ${source} AS i CROSS JOIN ev_sequences AS q
      RETURNING id, business_id, environment, event, created_at
    )`;
  }
  return `ev_counts AS (
      SELECT business_id, environment, subject, count(*)::bigint AS n FROM ${source}
      GROUP BY business_id, environment, subject
    ),
    ev_sequences AS (
      INSERT INTO event_sequences AS s (business_id, environment, subject, last_sequence)
      SELECT business_id, environment, subject, n FROM ev_counts ORDER BY subject
      ON CONFLICT (business_id, environment, subject)
        DO UPDATE SET last_sequence = s.last_sequence + excluded.last_sequence
      RETURNING business_id, environment, subject, last_sequence
    ),
    ev_numbered AS (
      SELECT i.*, q.last_sequence - c.n
        + row_number() OVER (PARTITION BY i.business_id, i.environment, i.subject ORDER BY i.ord) AS sequence
      FROM ${source} AS i
      JOIN ev_counts c ON c.business_id = i.business_id AND c.environment = i.environment AND c.subject = i.subject
      JOIN ev_sequences q ON q.business_id = i.business_id AND q.environment = i.environment AND q.subject = i.subject
    ),
    ev AS (
      INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
      SELECT id, business_id, environment, event, subject,
        left(body, -1) || ',"sequence":' || sequence::text || '}', created_at, sequence
      FROM ev_numbered ORDER BY ord
      RETURNING id, business_id, environment, event, created_at
    )`;
}

const countOf = (events: readonly EventRecord[]) => (events.length === 1 ? 'one' : 'many');

function valuesOf(events: readonly EventRecord[]) {
  const rows = events.map(
    (record, ord) =>
      sql`(${record.id}::text, ${record.businessId}::text, ${record.environment}::text, ${record.event}::text, ${record.subject}::text, ${record.body}::text, ${record.createdAt}::timestamptz, ${ord}::int)`,
  );
  return sql`ev_input (id, business_id, environment, event, subject, body, created_at, ord) AS (VALUES ${sql.join(rows)})`;
}

/**
 * The CTEs that write `events` and, unless `fanOut` is false, their deliveries, for the statement
 * of a unit of work (`unit-of-work.ts`) that makes the change they announce (a data-modifying CTE
 * must sit at the top of its statement).
 */
export function eventCtes(events: readonly EventRecord[], options: { fanOut: boolean }): RawBuilder<unknown> {
  if (events.length === 0) throw new Error('eventCtes needs at least one event');
  const written = sql`${valuesOf(events)}, ${sql.raw(sequencedInsertSql('ev_input', countOf(events)))}`;
  return options.fanOut ? sql`${written}, ev_deliveries AS (${sql.raw(fanOutSql('ev'))})` : written;
}
