import type { Transaction } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import type { BalanceTransactionType } from './balance-types.js';

/**
 * What each seller of a split has given back so far to the returns of one payment or order: the
 * net of its balance transactions of `types` from that source (`refundTakes` targets less these).
 * The caller holds the payment's or order's lock, so no return of it is being written meanwhile.
 */
export async function sellersTaken(
  trx: Transaction<DB>,
  source: {
    environment: Environment;
    businessId: string;
    reference: string;
    types: readonly BalanceTransactionType[];
  },
): Promise<Map<string, number>> {
  const rows = await trx
    .selectFrom('balance_transactions')
    .select(['seller_id', (eb) => eb.fn.sum<string>('net').as('net')])
    .where('business_id', '=', source.businessId)
    .where('environment', '=', source.environment)
    .where('source_reference', '=', source.reference)
    .where('seller_id', 'is not', null)
    .where('type', 'in', source.types)
    .groupBy('seller_id')
    .execute();
  return new Map(rows.map((row) => [row.seller_id!, -Number(row.net)]));
}
