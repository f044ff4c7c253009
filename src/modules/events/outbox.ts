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

export async function recordEvents(executor: Executor, events: readonly EventRecord[]): Promise<void> {
  if (events.length === 0) return;
  await executor
    .insertInto('events')
    .values(
      events.map((record) => ({
        id: record.id,
        business_id: record.businessId,
        environment: record.environment,
        event: record.event,
        subject: record.subject,
        body: record.body,
        created_at: record.createdAt,
      })),
    )
    .execute();
}
