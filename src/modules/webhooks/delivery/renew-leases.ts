import { sql, type Kysely } from 'kysely';
import type { DB } from '../../../db/schema.js';

/**
 * Extends the leases of the deliveries this worker holds. A delivery locked now is having its
 * outcome written or its endpoint's backlog ended: it is skipped (its lease is cleared either
 * way), so a renewal never waits, nor deadlocks.
 */
export async function renewLeases(
  db: Kysely<DB>,
  workerId: string,
  held: readonly string[],
  leaseSeconds: number,
): Promise<void> {
  if (held.length === 0) return;
  await sql`
    UPDATE webhook_deliveries SET locked_until = now() + make_interval(secs => ${leaseSeconds})
    WHERE id IN (
      SELECT id FROM webhook_deliveries
      WHERE locked_by = ${workerId} AND id = ANY(${[...held]}::text[])
      FOR NO KEY UPDATE SKIP LOCKED
    )`.execute(db);
}
