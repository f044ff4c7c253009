import type { ColumnType, Generated } from 'kysely';
import type { Environment } from './columns.js';

/** Every status of a payout: the one list the table type, schemas and filters derive from. */
export const PAYOUT_STATUSES = ['PENDING', 'PAID', 'FAILED', 'CANCELLED'] as const;

export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** Why a payout failed, as its `failureCode` says. */
export const PAYOUT_FAILURE_CODES = ['WALLET_NOT_FOUND', 'WALLET_LOCKED'] as const;

export type PayoutFailureCode = (typeof PAYOUT_FAILURE_CODES)[number];

export interface PayoutBatchesTable {
  id: string;
  business_id: string;
  environment: Environment;
  item_count: number;
  total_amount: number;
  total_fee: number;
  created_at: Date;
}

export interface PayoutsTable {
  reference: string;
  business_id: string;
  environment: Environment;
  batch_id: string | null;
  batch_index: number | null;
  amount: number;
  fee: number;
  destination_type: 'WALLET';
  destination_phone: string;
  description: string;
  metadata: ColumnType<Record<string, string>, string, string>;
  status: PayoutStatus;
  failure_code: PayoutFailureCode | null;
  failure_message: string | null;
  wallet_id: string | null;
  created_at: Date;
  updated_at: Date;
  paid_at: Date | null;
  failed_at: Date | null;
  cancelled_at: Date | null;
  /** The seller (SL-...) whose balance pays it and whose phone it goes to (migration 046); null: the business's. */
  seller_id: Generated<string | null>;
}
