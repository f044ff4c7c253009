import type { ColumnType, Generated } from 'kysely';
import type { Environment } from './columns.js';
import type { PaymentFailure } from './payments.js';
import type { SplitRecord, SplitShareRecord } from './sellers.js';

/** Every status of a payment intent: the one list the table type, schemas and filters derive from. */
export const INTENT_STATUSES = ['PENDING', 'PAID', 'REFUNDED', 'CANCELLED', 'FAILED'] as const;

export type IntentStatus = (typeof INTENT_STATUSES)[number];

/** A fixed amount set by the merchant, or an open one the payer enters. */
export const AMOUNT_TYPES = ['FIXED', 'OPEN'] as const;

export type AmountType = (typeof AMOUNT_TYPES)[number];

export interface PaymentIntentsTable {
  id: Generated<number>;
  reference_number: string;
  short_code: string;
  business_id: string;
  environment: Environment;
  amount_type: AmountType;
  amount: number | null;
  suggested_amount: number | null;
  label: string;
  metadata: ColumnType<Record<string, string>, string, string>;
  success_url: string | null;
  cancel_url: string | null;
  status: IntentStatus;
  payment_code: number | null;
  expires_at: Date;
  amount_paid: number | null;
  paid_at: Date | null;
  payment_method: string | null;
  payer_phone: string | null;
  /** The wallet that paid (refunds go back to it). */
  payer_wallet_id: Generated<string | null>;
  payer_fee: Generated<number>;
  provider_ttc: Generated<number>;
  payer_ttc: Generated<number>;
  tof: Generated<number>;
  tte: Generated<number>;
  tof_bps: Generated<number>;
  tte_bps: Generated<number>;
  total_amount_refunded: Generated<number>;
  /** What the refunds took back of the provider fee and of the taxes (migration 024). */
  provider_returned: Generated<number>;
  tof_returned: Generated<number>;
  tte_returned: Generated<number>;
  /**
   * Why the last payment attempt failed (cleared when one succeeds). A process of a version before
   * migration 023 may still have written its text: readers show only the codes they know.
   */
  last_failure: PaymentFailure | null;
  /** Set with CANCELLED: by the merchant (`cancel`) or by the 24-hour timer (`expiry`). */
  cancel_reason: Generated<'cancel' | 'expiry' | null>;
  /** The payment link it was made through (`PL-…`, migration 037), with what the payer wrote there. */
  payment_link: Generated<string | null>;
  payer_name: Generated<string | null>;
  payer_note: Generated<string | null>;
  /** The split between sellers asked for at create time, and what the payment gave each (migration 045). */
  split: ColumnType<SplitRecord | null, string | null | undefined, string | null>;
  split_shares: ColumnType<SplitShareRecord[] | null, string | null | undefined, string | null>;
  created_at: Date;
  updated_at: Date;
}

export interface RefundsTable {
  id: string;
  intent_id: number;
  amount: number;
  reason: string | null;
  status: 'SUCCEEDED';
  provider_ttc: number;
  tof: number;
  tte: number;
  created_at: Date;
  ledger_transaction_id: string | null;
}
