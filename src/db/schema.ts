/**
 * The database's tables as Kysely reads and writes them: each feature's tables, column types and
 * the vocabularies its columns hold live in schema/<feature>.ts; `DB` gathers them for `Kysely<DB>`.
 */
import type { AuditLogTable } from './schema/audit.js';
import type { BusinessesTable, ShopsTable } from './schema/businesses.js';
import type { DashboardInvitationsTable, DashboardSessionsTable, DashboardUsersTable } from './schema/dashboard.js';
import type { EventSequencesTable, EventsTable } from './schema/event-log.js';
import type { PaymentIntentsTable, RefundsTable } from './schema/intents.js';
import type { ApiKeysTable } from './schema/keys.js';
import type { PaymentLinksTable } from './schema/links.js';
import type { MerchantMutesTable, OperatorNoticesTable, PaymentRequestsTable } from './schema/requests.js';
import type { OrdersTable } from './schema/orders.js';
import type {
  BalanceTransactionsTable,
  FeePlansTable,
  LedgerAccountsTable,
  LedgerPendingMovementsTable,
  LedgerPostingsTable,
  ArchivedMonthTotalsTable,
  PaymentsTable,
} from './schema/payments.js';
import type { PayoutBatchesTable, PayoutsTable } from './schema/payouts.js';
import type { IdempotencyKeysTable, PeriodicTasksTable, PlatformSettingsTable } from './schema/platform.js';
import type { MediaFilesTable, ProductsTable } from './schema/products.js';
import type { SellerPayoutDaysTable, SellersTable } from './schema/sellers.js';
import type { UnknownPhonePinAttemptsTable, WalletsTable } from './schema/wallets.js';
import type {
  WebhookAttemptRollupsTable,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEndpointsTable,
} from './schema/webhooks.js';

export type { Environment } from './schema/columns.js';
export * from './schema/audit.js';
export * from './schema/businesses.js';
export * from './schema/dashboard.js';
export * from './schema/event-log.js';
export * from './schema/intents.js';
export * from './schema/keys.js';
export * from './schema/links.js';
export * from './schema/requests.js';
export * from './schema/orders.js';
export * from './schema/payments.js';
export * from './schema/payouts.js';
export * from './schema/platform.js';
export * from './schema/products.js';
export * from './schema/sellers.js';
export * from './schema/wallets.js';
export * from './schema/webhooks.js';

export interface DB {
  audit_log: AuditLogTable;
  dashboard_users: DashboardUsersTable;
  dashboard_sessions: DashboardSessionsTable;
  dashboard_invitations: DashboardInvitationsTable;
  wallets: WalletsTable;
  unknown_phone_pin_attempts: UnknownPhonePinAttemptsTable;
  ledger_accounts: LedgerAccountsTable;
  ledger_postings: LedgerPostingsTable;
  archived_month_totals: ArchivedMonthTotalsTable;
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
  payment_links: PaymentLinksTable;
  sellers: SellersTable;
  seller_payout_days: SellerPayoutDaysTable;
  payment_requests: PaymentRequestsTable;
  merchant_mutes: MerchantMutesTable;
  operator_notices: OperatorNoticesTable;
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
