import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { deleteInBatches, type BatchBudget, type BatchedDeleteResult } from '../../db/batched-delete.js';
import { firstIdAt } from '../../lib/ids.js';
import { fromStatuses } from './delivery-state.js';

/**
 * Periodic (decision 093): finished deliveries (SUCCEEDED or DEAD) that ended more than `days`
 * ago, each with its attempts in the same transaction, so the log never shows a delivery without
 * its attempts nor keeps attempts without their delivery. The list counts follow by the delete's
 * own trigger (migration 018), so the log's totals stay exact.
 *
 * No index of its own: a delivery's `created_at` is its event's, made with the event's
 * time-sortable id, and a delivery ends after it is made, so the rows to delete are among those
 * whose `event_id` sorts below the first id of the cutoff, which the event index reads in order.
 * The few kept there (still waiting, or brought back by a recent retry) are read again each batch.
 * A row another transaction holds (a retry racing) is skipped, and taken at a later run.
 */
export function deleteOldDeliveries(db: Kysely<DB>, days: number, budget: BatchBudget): Promise<BatchedDeleteResult> {
  return deleteInBatches(db, budget, async (trx, limit) => {
    const cutoff = new Date(Date.now() - days * 86_400_000);
    const doomed = await sql<{ id: string }>`
      SELECT id FROM webhook_deliveries
      WHERE event_id < ${firstIdAt('evt', cutoff)} AND status IN (${fromStatuses('purge')})
        AND coalesce(completed_at, created_at) < ${cutoff}
      ORDER BY event_id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED`.execute(trx);
    const ids = doomed.rows.map((row) => row.id);
    if (ids.length === 0) return 0;
    // Arrays, not lists: one statement text whatever the batch's size (statements are prepared).
    await sql`DELETE FROM webhook_attempts WHERE delivery_id = ANY(${ids}::text[])`.execute(trx);
    await sql`DELETE FROM webhook_deliveries WHERE id = ANY(${ids}::text[])`.execute(trx);
    return ids.length;
  });
}
