import type { ColumnType, Generated } from 'kysely';
import type { Lang } from '../lib/i18n.js';

export type Environment = 'test' | 'live';
export type KeyKind = 'secret' | 'publishable';
export type KeyStatus = 'active' | 'suspended' | 'revoked' | 'rotated';

/** A timestamp column the database fills unless told otherwise. */
type CreatedAt = ColumnType<Date, Date | undefined, Date>;

export interface BusinessesTable {
  id: string;
  name: string;
  live_approved: Generated<boolean>;
  api_enabled: Generated<boolean>;
  /** When the business asked for live access from its dashboard (migration 031); null: never. */
  live_requested_at: Generated<Date | null>;
  /** The shop's contact on its customers' order pages (migration 032); each may be null. */
  contact_phone: Generated<string | null>;
  contact_email: Generated<string | null>;
  pickup_address: Generated<string | null>;
  delivers: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface ShopsTable {
  id: string;
  business_id: string;
  environment: Environment;
  name: string;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  business_id: string;
  kind: KeyKind;
  environment: Environment;
  key_hash: string;
  key_hint: string;
  scopes: string[];
  ip_allowlist: ColumnType<string[], string[] | undefined, string[]>;
  status: ColumnType<KeyStatus, KeyStatus | undefined, KeyStatus>;
  replaced_by: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  last_used_at: Generated<Date | null>;
}

export type DashboardRole = 'owner' | 'viewer';
/** A dashboard session's language: any language the pages speak (migration 030 lets the column hold 'ar'). */
export type DashboardLang = Lang;

export interface DashboardUsersTable {
  id: string;
  business_id: string;
  email: string;
  password_hash: string;
  role: DashboardRole;
  disabled_at: Date | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface DashboardSessionsTable {
  token_hash: string;
  user_id: string;
  csrf_token: string;
  environment: ColumnType<Environment, Environment | undefined, Environment>;
  lang: ColumnType<DashboardLang, DashboardLang | undefined, DashboardLang>;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  revoked_at: Date | null;
}

export interface PlatformSettingsTable {
  name: string;
  value: ColumnType<unknown, string, string>;
  updated_at: CreatedAt;
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

export interface IdempotencyKeysTable {
  id: Generated<number>;
  business_id: string;
  environment: Environment;
  idempotency_key: string;
  fingerprint: string;
  state: 'running' | 'done';
  response_status: number | null;
  response_body: string | null;
  created_at: CreatedAt;
}

export interface PeriodicTasksTable {
  name: string;
  next_run_at: CreatedAt;
  last_run_at: Date | null;
  last_error: string | null;
  /** The worker running the task now, until `locked_until` (renewed while it runs). */
  locked_by: string | null;
  locked_until: Date | null;
}

import type { AmountType, IntentStatus } from '../modules/intents/state.js';
export type { AmountType, IntentStatus };
import type { IntentFailure, PaymentFailureCode, PaymentMethodName, PaymentStatus } from '../modules/payments/state.js';
export type { PaymentFailureCode, PaymentMethodName, PaymentStatus };
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

export interface EventsTable {
  id: string;
  business_id: string;
  environment: Environment;
  event: string;
  subject: string;
  body: string;
  created_at: Date;
  /** Insertion order (events of one transaction share a timestamp). */
  seq: Generated<number>;
  /** Counts the events of the subject from 1 (migration 013). */
  sequence: number;
  /** The writing transaction (for commit-safe polling). */
  txid: Generated<number>;
}

export interface EventSequencesTable {
  business_id: string;
  environment: Environment;
  subject: string;
  last_sequence: number;
}

import type { DeadReason, DeliveryStatus } from '../modules/webhooks/delivery-state.js';
export type { DeadReason, DeliveryStatus };
export type SignatureScheme = 'commerce' | 'standard';
export type EndpointDisabledReason = 'FAILING' | 'MANUAL';

export interface WebhookEndpointsTable {
  id: string;
  business_id: string;
  environment: Environment;
  url: string;
  events: string[];
  active: Generated<boolean>;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  deleted_at: Date | null;
  signature_scheme: Generated<SignatureScheme>;
  max_per_second: Generated<number | null>;
  rate_window_at: Generated<Date | null>;
  rate_window_count: Generated<number>;
  failing_since: Generated<Date | null>;
  disable_warned_at: Generated<Date | null>;
  disabled_at: Generated<Date | null>;
  disabled_reason: Generated<EndpointDisabledReason | null>;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  business_id: string;
  environment: Environment;
  event: string;
  status: DeliveryStatus;
  attempt_count: Generated<number>;
  attempts_total: Generated<number>;
  next_attempt_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  /** Set exactly while the status is DEAD (a check constraint holds them together). */
  dead_reason: Generated<DeadReason | null>;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  error_class: string | null;
  request_headers: Record<string, string> | null;
  response_headers: Record<string, string> | null;
  /** Up to 4 KB of the answer. */
  response_body: string | null;
}

export interface WebhookAttemptRollupsTable {
  endpoint_id: string;
  hour: Date;
  outcome: string;
  latency_bucket: number;
  attempts: number;
  last_error: string | null;
  last_error_at: Date | null;
  last_status_code: number | null;
}

export type ProductStatus = 'ACTIVE' | 'DISABLED';

export interface StoredImage {
  id: string;
  url: string;
  sortOrder: number;
}
export interface StoredVariant {
  _id: string;
  type: string;
  label: string;
  value: string | null;
  priceAdjustment: number;
  quantity: number | null;
}
export interface StoredOption {
  _id: string;
  name: string;
  priceAdjustment: number;
}
export interface PreparationTime {
  value: number;
  unit: 'minutes' | 'hours' | 'days';
}

/** jsonb columns with a default: read as values, written as JSON text. */
type Json<T> = ColumnType<T, string | undefined, string>;

export interface ProductsTable {
  id: string;
  shop_id: string;
  business_id: string;
  environment: Environment;
  external_id: string | null;
  name: string;
  search_name: string;
  search_vector: ColumnType<string, never, never>;
  description: string | null;
  price: number;
  cost_basis: number | null;
  category_id: string | null;
  quantity: number | null;
  status: ProductStatus;
  is_flexible_price: Generated<boolean>;
  low_stock_threshold: Generated<number>;
  preparation_time: ColumnType<PreparationTime | null, string | null | undefined, string | null>;
  images: Json<StoredImage[]>;
  variants: Json<StoredVariant[]>;
  options: Json<StoredOption[]>;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface MediaFilesTable {
  id: string;
  business_id: string;
  storage_key: string;
  content_type: string;
  size_bytes: number;
  created_at: CreatedAt;
}

import type { OrderStatus } from '../modules/orders/state.js';
export type { OrderStatus };

/** An order line as bought: the product's name and prices at order time. */
export interface OrderItem {
  productId: string;
  name: string;
  quantity: number;
  price: number;
  variant?: { _id: string; label: string; priceAdjustment: number };
  options?: { _id: string; name: string; priceAdjustment: number }[];
}
export interface OrderRefund {
  id: string;
  amount: number;
  /** Why: the cancellation reason for a cancel's refund, else the merchant's own or null. */
  reason?: string | null;
  createdAt: string;
  /** null only on refunds recorded before orders moved money. */
  ledgerTransactionId?: string | null;
}
/** A modification's settled difference: positive charged to the wallet, negative refunded. */
export interface OrderAdjustment {
  id: string;
  amount: number;
  createdAt: string;
  ledgerTransactionId: string;
}
/** The order's payment record, as the order's JSON shows it. */
export interface OrderPayment {
  id: string;
  /** Paid for the goods, net of accepted modifications. */
  amountPaid: number;
  payerFee: number;
  method: 'WALLET';
  payerPhone: string;
  paidAt: string;
  ledgerTransactionId: string;
  adjustments: OrderAdjustment[];
}
/**
 * The fees of an order's payments, kept so its refunds return the provider fee in proportion as
 * intent refunds do (decisions: Refunds, Commission): the plan at payment time, the amounts
 * charged and their provider fee, what was returned so far and of which provider fee.
 */
/** An order's fee plan when paid and its fee state (payments/fees.ts `FeeState`). */
export interface OrderFees {
  providerBps: number;
  tofBps: number;
  tteBps: number;
  revenueModel?: RevenueModel;
  marginBps?: number;
  charged: number;
  providerTtc: number;
  payerTtc: number;
  tof: number;
  tte: number;
  returned: number;
  providerReturned: number;
  tofReturned: number;
  tteReturned: number;
}
export interface OrderHistoryEntry {
  status: OrderStatus;
  previousStatus: OrderStatus | null;
  at: string;
}
export interface ProposedModification {
  items: OrderItem[];
  totalAmount: number;
  proposedAt: string;
}

export interface OrdersTable {
  id: Generated<number>;
  reference_number: string;
  shop_id: string;
  business_id: string;
  environment: Environment;
  status: OrderStatus;
  items: ColumnType<OrderItem[], string, string>;
  total_amount: number;
  customer_name: string;
  customer_phone: string;
  paid: boolean;
  total_amount_refunded: Generated<number>;
  refunds: ColumnType<OrderRefund[], string | undefined, string>;
  cancellation_reason: string | null;
  history: ColumnType<OrderHistoryEntry[], string, string>;
  proposed_modification: ColumnType<ProposedModification | null, string | null | undefined, string | null>;
  customer_ref: string;
  payer_wallet_id: string | null;
  amount_paid: Generated<number>;
  payment: ColumnType<OrderPayment | null, string | null | undefined, string | null>;
  fees: ColumnType<OrderFees | null, string | null | undefined, string | null>;
  created_at: Date;
  updated_at: Date;
}

export interface WalletsTable {
  id: string;
  environment: Environment;
  phone: string;
  pin_hash: string;
  status: ColumnType<'active' | 'locked', 'active' | 'locked' | undefined, 'active' | 'locked'>;
  failed_pin_attempts: Generated<number>;
  locked_until: Date | null;
  /** When the last PIN attempt was taken (migration 028): older than the lock window, the count is zero. */
  last_pin_attempt_at: Generated<Date | null>;
  created_at: CreatedAt;
}

/** Wrong PINs for phones without a wallet, counted like a wallet's (migration 015). */
export interface UnknownPhonePinAttemptsTable {
  environment: Environment;
  phone: string;
  failed_pin_attempts: number;
  locked_until: Date | null;
  /** Migration 028: older than the lock window, the count is zero and the cleanup deletes the row. */
  last_attempt_at: Generated<Date>;
}

export type LedgerAccountKind = 'wallet' | 'merchant' | 'revenue' | 'tof' | 'tte' | 'funding' | 'payouts';

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
  description: string;
  ledger_transaction_id: string;
  balance_after: number | null;
  /** The payout (PO-...) or payout batch that settles this transaction; null until one does. */
  settled_by: Generated<string | null>;
  created_at: Date;
}

import type { BalanceSourceKind } from '../modules/payments/balance-types.js';
export type { BalanceSourceKind };

import type { PayoutFailureCode, PayoutStatus } from '../modules/payouts/state.js';
export type { PayoutStatus, PayoutFailureCode };

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

export interface DB {
  dashboard_users: DashboardUsersTable;
  dashboard_sessions: DashboardSessionsTable;
  wallets: WalletsTable;
  unknown_phone_pin_attempts: UnknownPhonePinAttemptsTable;
  ledger_accounts: LedgerAccountsTable;
  ledger_postings: LedgerPostingsTable;
  ledger_pending_movements: LedgerPendingMovementsTable;
  balance_transactions: BalanceTransactionsTable;
  payouts: PayoutsTable;
  payout_batches: PayoutBatchesTable;
  orders: OrdersTable;
  products: ProductsTable;
  media_files: MediaFilesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_attempt_rollups: WebhookAttemptRollupsTable;
  payment_intents: PaymentIntentsTable;
  payments: PaymentsTable;
  refunds: RefundsTable;
  events: EventsTable;
  event_sequences: EventSequencesTable;
  businesses: BusinessesTable;
  shops: ShopsTable;
  api_keys: ApiKeysTable;
  platform_settings: PlatformSettingsTable;
  fee_plans: FeePlansTable;
  idempotency_keys: IdempotencyKeysTable;
  periodic_tasks: PeriodicTasksTable;
}
