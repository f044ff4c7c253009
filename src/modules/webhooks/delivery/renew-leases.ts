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

/**
 * Renews the leases of what `held()` lists every quarter lease (at least 500 ms apart), one
 * renewal at a time: a renewal waiting on a locked delivery must not be joined by another every
 * tick until they hold every pooled connection. Returns the function that stops it.
 */
export function keepLeases(
  db: Kysely<DB>,
  workerId: string,
  held: () => readonly string[],
  leaseSeconds: number,
  onError: (error: unknown) => void,
): () => void {
  let renewing = false;
  const timer = setInterval(
    () => {
      if (renewing) return;
      renewing = true;
      renewLeases(db, workerId, held(), leaseSeconds)
        .catch(onError)
        .finally(() => (renewing = false));
    },
    Math.max(500, (leaseSeconds * 1000) / 4),
  );
  return () => clearInterval(timer);
}
