import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Environment } from './columns.js';

/** Every status of a payment (one attempt to pay): the one list the table type, schemas and views derive from. */
export const PAYMENT_STATUSES = ['PROCESSING', 'SUCCEEDED', 'FAILED'] as const;

export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * How a payment is made: the wallet and its PIN typed on one of our pages (checkout, pay-by-code,
 * storefront), or the sandbox's simulation (a test key's `simulate`).
 */
export const PAYMENT_METHODS = ['WALLET_PIN', 'SANDBOX', 'WALLET_REQUEST'] as const;

export type PaymentMethodName = (typeof PAYMENT_METHODS)[number];

/**
 * The failures that fail the intent too (FAILED, `payment.failed`, its `last_failure`), as they
 * always have: the money was asked for and not given.
 */
export const INTENT_FAILURES = ['INSUFFICIENT_BALANCE', 'SANDBOX_DECLINED', 'SIMULATED_FAILURE'] as const;

export type IntentFailure = (typeof INTENT_FAILURES)[number];

/**
 * Why a payment failed: the intent's failures, then those of an attempt that never reached the
 * money (a wrong PIN, a locked wallet), a payer who said no, one who never answered in
 * time, or one whose yes came after the intent could no longer be paid.
 */
export const PAYMENT_FAILURES = [
  ...INTENT_FAILURES,
  'INVALID_PIN',
  'WALLET_LOCKED',
  'DECLINED',
  'TIMED_OUT',
  'NOT_PAYABLE',
  'CANCELLED',
] as const;

export type PaymentFailureCode = (typeof PAYMENT_FAILURES)[number];

/** Why an intent's last payment attempt failed, as a code each channel words in its own way. */
export type PaymentFailure = IntentFailure;

/** What the platform takes of a payment, snake_case as the `commission` object of events (api.md 6.2). */
export interface Commission {
  provider_ttc: number;
  payer_ttc: number;
  tof: number;
  tte: number;
  total_revenue: number;
}

/** A line a payment credited: an account kind (merchant, revenue, tof, tte) and its centimes. */
export interface SettlementLineRecord {
  account: LedgerAccountKind;
  amount: number;
  /** A seller's line (decision 080): whose account it credited. */
  seller?: string;
}

/** One attempt to pay an intent or an order (migration 035). */
export interface PaymentsTable {
  id: string;
  business_id: string;
  environment: Environment;
  intent_id: number | null;
  order_id: number | null;
  method: PaymentMethodName;
  status: PaymentStatus;
  amount: number;
  payer_phone: string | null;
  payer_wallet_id: string | null;
  commission: ColumnType<Commission | null, string | null, string | null>;
  settlement: ColumnType<SettlementLineRecord[], string, string>;
  failure_code: PaymentFailureCode | null;
  failure_message: string | null;
  ledger_transaction_id: string | null;
  created_at: Date;
  settled_at: Date | null;
  updated_at: Date;
}

export interface FeePlansTable {
  business_id: string;
  provider_bps: Generated<number>;
  payer_fee: Generated<number>;
  tof_bps: Generated<number>;
  tte_bps: Generated<number>;
  revenue_model: Generated<RevenueModel>;
  margin_bps: Generated<number>;
  payout_fee_flat: Generated<number>;
  payout_fee_bps: Generated<number>;
  updated_at: CreatedAt;
}

export type RevenueModel = 'COMMISSION' | 'MARGIN';

/** A seller's account (`seller`, migration 044) is owned by the seller's id, under its business. */
export type LedgerAccountKind = 'wallet' | 'merchant' | 'revenue' | 'tof' | 'tte' | 'funding' | 'payouts' | 'seller';

export interface LedgerAccountsTable {
  id: string;
  environment: Environment;
  kind: LedgerAccountKind;
  owner_id: Generated<string>;
  balance: Generated<number>;
  created_at: CreatedAt;
}

export interface LedgerPendingMovementsTable {
  id: Generated<number>;
  account_id: string;
  amount: number;
  balance_transaction_id: string | null;
}

export interface LedgerPostingsTable {
  id: Generated<number>;
  transaction_id: string;
  account_id: string;
  amount: number;
  kind: 'payment' | 'refund' | 'credit';
  reference: string;
  created_at: Date;
}

/**
 * The totals of a month of money records archived out of the live tables (migration 056,
 * db/partition-archive.ts): per ledger account (sum of amount) or per business (sum of net).
 */
export interface ArchivedMonthTotalsTable {
  table_name: 'ledger_postings' | 'balance_transactions';
  month: Date;
  owner_id: string;
  environment: Environment;
  rows: number;
  total: number;
  archived_at: CreatedAt;
}

/** What a balance transaction belongs to. */
export const BALANCE_SOURCE_KINDS = ['payment_intent', 'order', 'payout'] as const;

export type BalanceSourceKind = (typeof BALANCE_SOURCE_KINDS)[number];

/**
 * What a balance transaction's description is made of (migration 054, decision 086): the type and
 * the source say what moved; this keeps the rest. Worded by whoever shows it, in its language
 * (payments/balance-wording.ts).
 */
export interface BalanceDetail {
  /** The movement's own reference when it is not the source: a refund's, an order modification's. */
  reference?: string;
  /** The merchant's own text: a payment's label, a payout's description. Shown as written. */
  label?: string;
  /** Why a payout's money came back (`payout_reversal`). */
  outcome?: 'failed' | 'cancelled';
  /** A sentence written before descriptions were data that migration 054 could not read: shown as it is. */
  text?: string;
}

export interface BalanceTransactionsTable {
  id: string;
  business_id: string;
  environment: Environment;
  type: string;
  amount: number;
  fee: number;
  net: number;
  source_reference: string;
  source_kind: BalanceSourceKind;
  /** What the description is worded from besides type and source (migration 054, balance-wording.ts). */
  detail: ColumnType<BalanceDetail, string, string>;
  ledger_transaction_id: string;
  balance_after: number | null;
  /** The payout (PO-...) or payout batch that settles this transaction; null until one does. */
  settled_by: Generated<string | null>;
  created_at: Date;
  /** The seller (SL-...) whose account moved (migration 046); null for the business's own balance. */
  seller_id: Generated<string | null>;
  /** The order the balance took it in (migration 053): every list, export and statement reads by it. */
  applied_order: Generated<number>;
}
