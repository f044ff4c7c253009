import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { UNPAID_REQUEST_ENDS } from '../../db/schema/requests.js';
import { deleteInBatches, type BatchBudget, type BatchedDeleteResult } from '../../db/batched-delete.js';

/**
 * Periodic (decision 093): requests that ended without moving money more than `days` ago, each
 * with its operator notice (the only row that points at a request). The request's payment row
 * stays: payments are money records, and they do not point back at the request. A paid
 * (APPROVED) request is kept for ever, like the payment it made.
 */
export function deleteEndedRequests(db: Kysely<DB>, days: number, budget: BatchBudget): Promise<BatchedDeleteResult> {
  // Literals, so the statement matches migration 057's partial index.
  const unpaid = sql.join(UNPAID_REQUEST_ENDS.map((status) => sql.lit(status)));
  return deleteInBatches(db, budget, async (trx, limit) => {
    const cutoff = new Date(Date.now() - days * 86_400_000);
    const doomed = await sql<{ id: string }>`
      SELECT id FROM payment_requests
      WHERE status IN (${unpaid}) AND ended_at < ${cutoff}
      ORDER BY ended_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED`.execute(trx);
    const ids = doomed.rows.map((row) => row.id);
    if (ids.length === 0) return 0;
    await sql`DELETE FROM operator_notices WHERE request_id = ANY(${ids}::text[])`.execute(trx);
    await sql`DELETE FROM payment_requests WHERE id = ANY(${ids}::text[])`.execute(trx);
    return ids.length;
  });
}
