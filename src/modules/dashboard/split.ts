import type { Kysely } from 'kysely';
import type { DB, SplitShareRecord } from '../../db/schema.js';

/** One seller's line of a payment's split as the payment and order pages draw it: its name links to its page. */
export interface SplitRow extends SplitShareRecord {
  name: string;
}

/**
 * The shares a payment gave its sellers (an intent's or an order's `split_shares`, decisions 080
 * and 081) with each seller's name, in the split's order; nothing for a payment without one.
 */
export async function splitRows(db: Kysely<DB>, shares: readonly SplitShareRecord[] | null): Promise<SplitRow[]> {
  if (!shares || shares.length === 0) return [];
  const names = new Map(
    (
      await db
        .selectFrom('sellers')
        .select(['id', 'name'])
        .where(
          'id',
          'in',
          shares.map((share) => share.seller),
        )
        .execute()
    ).map((row) => [row.id, row.name]),
  );
  return shares.map((share) => ({ ...share, name: names.get(share.seller) ?? share.seller }));
}
