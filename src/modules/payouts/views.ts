import type { Selectable } from 'kysely';
import type { PayoutBatchesTable, PayoutsTable } from '../../db/schema.js';
import { PAYOUT_STATUSES, type PayoutStatus } from './state.js';

export type PayoutRow = Selectable<PayoutsTable>;
export type PayoutBatchRow = Selectable<PayoutBatchesTable>;

const iso = (at: Date | null) => (at ? at.toISOString() : null);

/** A payout as the API shows it. */
export function payoutView(row: PayoutRow) {
  return {
    referenceNumber: row.reference,
    amount: row.amount,
    fee: row.fee,
    totalDebited: row.amount + row.fee,
    currency: 'MRU' as const,
    status: row.status,
    destination: { type: row.destination_type, phone: row.destination_phone },
    description: row.description,
    metadata: row.metadata,
    failureCode: row.failure_code,
    failureMessage: row.failure_message,
    batchId: row.batch_id,
    seller: row.seller_id,
    sandbox: row.environment === 'test',
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    paidAt: iso(row.paid_at),
    failedAt: iso(row.failed_at),
    cancelledAt: iso(row.cancelled_at),
  };
}

export type PayoutView = ReturnType<typeof payoutView>;

/** A batch with how many of its payouts are in each status. */
export function batchView(row: PayoutBatchRow, counts: Partial<Record<PayoutStatus, number>>) {
  return {
    id: row.id,
    itemCount: row.item_count,
    totalAmount: row.total_amount,
    totalFee: row.total_fee,
    currency: 'MRU' as const,
    counts: Object.fromEntries(PAYOUT_STATUSES.map((status) => [status, counts[status] ?? 0])) as Record<
      PayoutStatus,
      number
    >,
    sandbox: row.environment === 'test',
    createdAt: row.created_at.toISOString(),
  };
}
