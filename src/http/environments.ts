import { sql } from 'kysely';
import type { Environment } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';

/** Tables whose rows belong to one business and one environment. */
type EnvironmentScoped =
  | 'products'
  | 'orders'
  | 'webhook_endpoints'
  | 'webhook_deliveries'
  | 'balance_transactions'
  | 'events'
  | 'payment_links';

/**
 * api.md 5 rule 4: a resource of the caller's own business that lives in the other environment
 * is a mismatch (403 SANDBOX_MISMATCH), not a missing one. Asked only after a lookup in the
 * caller's environment found nothing, so the common path pays nothing for it.
 */
export async function inOtherEnvironment(
  db: Executor,
  table: EnvironmentScoped,
  where: { column: 'id' | 'reference_number'; value: string; softDeleted?: boolean },
  caller: { businessId: string; environment: Environment },
): Promise<boolean> {
  const found = await sql`
    SELECT 1 FROM ${sql.table(table)}
    WHERE ${sql.ref(where.column)} = ${where.value} AND business_id = ${caller.businessId}
      AND environment <> ${caller.environment} ${where.softDeleted ? sql`AND deleted_at IS NULL` : sql``}
    LIMIT 1`.execute(db);
  return found.rows.length > 0;
}
