import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';

/**
 * The channel workers LISTEN on. A transaction that adds deliveries notifies it (a trigger,
 * migration 019), so the notice goes out at its commit and a worker claims them at once; writes
 * that make existing deliveries due (a manual retry, a recover, re-enabling an endpoint) call
 * `wakeWorkers` in their transaction.
 */
export const WAKE_CHANNEL = 'webhook_wake';

export async function wakeWorkers(executor: Executor): Promise<void> {
  await sql`SELECT pg_notify(${WAKE_CHANNEL}, '')`.execute(executor);
}
