import { sql, type Kysely } from 'kysely';
import type { DB } from '../../../db/schema.js';
import { fromStatuses } from '../delivery-state.js';
import type { ClaimedDelivery } from './claim.js';

/**
 * A stopping worker gives back what it claimed but did not send (`release`): the claim's attempt
 * and its log line are taken back, so the delivery is due again at once elsewhere, as if never
 * claimed.
 */
export async function releaseDeliveries(
  db: Kysely<DB>,
  workerId: string,
  deliveries: readonly ClaimedDelivery[],
): Promise<void> {
  if (deliveries.length === 0) return;
  const rows = deliveries.map((delivery) => ({ id: delivery.id, attempt: delivery.attempts_total }));
  await sql`
    WITH input AS (SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS x(id text, attempt int)),
    released AS (
      UPDATE webhook_deliveries d
      SET attempt_count = d.attempt_count - 1, attempts_total = d.attempts_total - 1, locked_by = NULL,
          locked_until = NULL, updated_at = now()
      FROM input x
      WHERE d.id = x.id AND d.status IN (${fromStatuses('release')}) AND d.locked_by = ${workerId}
        AND d.attempts_total = x.attempt
      RETURNING d.id, x.attempt
    )
    DELETE FROM webhook_attempts a USING released r WHERE a.delivery_id = r.id AND a.attempt = r.attempt`.execute(db);
}
