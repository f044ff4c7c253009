import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/connect.js';
import { countsByStatus } from '../../db/counted-list.js';
import type { DB, Environment, IntentStatus, OrderStatus } from '../../db/schema.js';
import type { OrderRow } from '../orders/model.js';
import { ORDER_STATUSES } from '../orders/state.js';
import type { BalanceTransactionType } from '../payments/balance-types.js';
import { listPayments, type PaymentSubject } from '../payments/store.js';
import { listIntents } from '../intents/service.js';
import { INTENT_STATUSES } from '../intents/state.js';
import { findIntentWithRefunds, type IntentWithRefunds } from '../intents/repo.js';
import { lastDays } from './chart.js';
import { isFailing } from './delivery-health.js';

/**
 * Reads only the dashboard makes (figures for the home page, search across intents). Every
 * change still goes through the API's services.
 */
interface Scope {
  businessId: string;
  environment: Environment;
}

/**
 * Paid volume per UTC day of payment, payments and storefront orders together: the intents from
 * the daily sums the writes keep (migration 018), the orders from their `order_payment` balance
 * transactions (an index on type and time): the business's row and, for an order split between
 * sellers, one per seller, whose amounts add up to the order's gross; only the business's counts.
 */
export async function paidVolumeByDay(database: Database, scope: Scope, days: number) {
  const range = lastDays(days);
  const rows = await sql<{ day: string; total: string; n: string }>`
    SELECT day, sum(total)::bigint AS total, sum(n)::bigint AS n FROM (
      SELECT to_char(day, 'YYYY-MM-DD') AS day, amount AS total, n
      FROM paid_volume_days
      WHERE business_id = ${scope.businessId} AND environment = ${scope.environment} AND day >= ${range[0]!}::date
      UNION ALL
      SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), amount, CASE WHEN seller_id IS NULL THEN 1 ELSE 0 END
      FROM balance_transactions
      WHERE business_id = ${scope.businessId} AND environment = ${scope.environment}
        AND type = ${'order_payment' satisfies BalanceTransactionType} AND created_at >= ${range[0]!}::date
    ) AS paid
    GROUP BY day`.execute(database.db);
  const byDay = new Map(rows.rows.map((row) => [row.day, { total: Number(row.total), count: Number(row.n) }]));
  return range.map((day) => ({ day, total: byDay.get(day)?.total ?? 0, count: byDay.get(day)?.count ?? 0 }));
}

/** Intents by status, from the counts the writes keep (migration 018). */
export async function intentCountsByStatus(database: Database, scope: Scope): Promise<Record<IntentStatus, number>> {
  const byStatus = await countsByStatus(database.db, 'intents', scope.businessId, scope.environment);
  const counts = INTENT_STATUSES.map((status) => [status, byStatus.get(status) ?? 0]);
  return Object.fromEntries(counts) as Record<IntentStatus, number>;
}

/** Orders by status, from the counts the order list's totals come from (migration 018). */
export async function orderCountsByStatus(database: Database, scope: Scope): Promise<Record<OrderStatus, number>> {
  const byStatus = await countsByStatus(database.db, 'orders', scope.businessId, scope.environment);
  const counts = ORDER_STATUSES.map((status) => [status, byStatus.get(status) ?? 0]);
  return Object.fromEntries(counts) as Record<OrderStatus, number>;
}

/**
 * The newest intents without the list's exact total: the home page shows no total, and counting
 * every intent of a large business cost more than the page itself.
 */
export async function latestIntents(database: Database, scope: Scope, limit: number): Promise<IntentWithRefunds[]> {
  const refs = await database.db
    .selectFrom('payment_intents')
    .select('reference_number')
    .where('business_id', '=', scope.businessId)
    .where('environment', '=', scope.environment)
    .orderBy('created_at', 'desc')
    .orderBy('reference_number', 'desc')
    .limit(limit)
    .execute();
  const items = await Promise.all(refs.map((row) => findIntentWithRefunds(database, row.reference_number)));
  return items.filter((item): item is IntentWithRefunds => item !== undefined);
}

/** An ILIKE pattern matching `text` anywhere, its own % and _ taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export interface IntentSearch {
  status: IntentStatus | undefined;
  from: Date | undefined;
  to: Date | undefined;
  /** A reference, short code, 6-digit payment code or metadata value, matched exactly, or a part of the label. */
  q: string | undefined;
  limit: number;
  offset: number;
}

/** The intent list with the API's own query, or, with a search text, the intents it names. */
export async function searchIntents(
  database: Database,
  scope: Scope,
  search: IntentSearch,
): Promise<{ total: number; items: IntentWithRefunds[] }> {
  const { q, ...filters } = search;
  if (!q) return listIntents(database, scope, filters);
  const code = /^\d{6}$/.test(q) ? Number(q) : -1;
  let query = database.db
    .selectFrom('payment_intents')
    .where('business_id', '=', scope.businessId)
    .where('environment', '=', scope.environment)
    .where((eb) =>
      eb.or([
        eb('reference_number', '=', q),
        eb('short_code', '=', q),
        eb('payment_code', '=', code),
        // A part of the label, any case ("Don" finds "Donation ..."): read over the business's
        // intents in this mode only (the scope's index), which a merchant's search can afford.
        sql<boolean>`payment_intents.label ILIKE ${containsPattern(q)}`,
        // Spelled as the expression of payment_intents_metadata_values_idx (migration 016), so
        // this arm is an index lookup rather than a read of every intent.
        sql<boolean>`jsonb_path_query_array(payment_intents.metadata, '$.*') @> jsonb_build_array(${q}::text)`,
      ]),
    );
  if (filters.status) query = query.where('status', '=', filters.status);
  if (filters.from) query = query.where('created_at', '>=', filters.from);
  if (filters.to) query = query.where('created_at', '<=', filters.to);
  const [refs, total] = await Promise.all([
    query
      .select('reference_number')
      .orderBy('created_at', 'desc')
      .orderBy('reference_number', 'desc')
      .limit(filters.limit)
      .offset(filters.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  const items = await Promise.all(refs.map((row) => findIntentWithRefunds(database, row.reference_number)));
  return { total: Number(total.n), items: items.filter((item): item is IntentWithRefunds => item !== undefined) };
}

/** An intent's events, oldest first, each with its webhook deliveries. */
export async function intentTimeline(database: Database, scope: Scope, referenceNumber: string) {
  const events = await database.db
    .selectFrom('events')
    .select(['id', 'event', 'created_at', 'body'])
    .where('subject', '=', referenceNumber)
    .where('business_id', '=', scope.businessId)
    .where('environment', '=', scope.environment)
    .orderBy('seq')
    .execute();
  const deliveries =
    events.length === 0
      ? []
      : await database.db
          .selectFrom('webhook_deliveries as d')
          .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
          .select(['d.id', 'd.event_id', 'd.status', 'd.dead_reason', 'd.attempt_count', 'd.last_status_code', 'e.url'])
          .where(
            'd.event_id',
            'in',
            events.map((event) => event.id),
          )
          .orderBy('d.created_at')
          .execute();
  return events.map((event) => ({
    id: event.id,
    event: event.event,
    createdAt: event.created_at,
    deliveries: deliveries
      .filter((delivery) => delivery.event_id === event.id)
      .map(({ dead_reason, ...delivery }) => ({
        ...delivery,
        deadReason: dead_reason,
        failing: isFailing({ status: delivery.status }),
      })),
  }));
}

/**
 * The order list with a search text: an order's reference, or a part of the customer's name or
 * phone, any case. Read over the business's orders in this mode (the list's index), newest first.
 */
export async function searchOrders(
  database: Database,
  scope: Scope,
  search: { q: string; status: OrderStatus | undefined; limit: number; offset: number },
): Promise<{ total: number; items: OrderRow[] }> {
  const pattern = containsPattern(search.q);
  let query = database.db
    .selectFrom('orders')
    .where('business_id', '=', scope.businessId)
    .where('environment', '=', scope.environment)
    .where((eb) =>
      eb.or([
        eb('reference_number', '=', search.q),
        sql<boolean>`orders.customer_name ILIKE ${pattern}`,
        sql<boolean>`orders.customer_phone ILIKE ${pattern}`,
      ]),
    );
  if (search.status) query = query.where('status', '=', search.status);
  const [items, total] = await Promise.all([
    query
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('reference_number', 'desc')
      .limit(search.limit)
      .offset(search.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { total: Number(total.n), items: items as OrderRow[] };
}

/** What a payment or order moved on the merchant's balance: gross in, refunded out, the fee kept, the net. */
export interface SourceAmounts {
  gross: number;
  refunded: number;
  /** The fee kept: `feeAtPayment` + `feeOnAdjustments` − `feeReturned`. */
  fee: number;
  /** The fee taken when it was paid, and the part of it its refunds gave back (the page shows both, labelled). */
  feeAtPayment: number;
  /** The fee taken on what an accepted order change charged later (shown apart: not "at payment"). */
  feeOnAdjustments: number;
  feeReturned: number;
  net: number;
}

/**
 * The amounts of one payment (PI-…) or order (OR-…) from its balance transactions (the source
 * index), so they add up to what the business's balance shows (its own rows: the sellers' shares
 * of a split are on the page's split card): refunds are negative rows, their fee the part of the
 * fee given back. Undefined while nothing was paid.
 */
export async function sourceAmounts(
  database: Database,
  scope: Scope,
  reference: string,
): Promise<SourceAmounts | undefined> {
  const row = await sql<{
    n: string;
    gross: string;
    refunded: string;
    fee: string;
    fee_at_payment: string;
    fee_on_adjustments: string;
    fee_returned: string;
    net: string;
  }>`
    SELECT count(*) AS n,
      coalesce(sum(amount) FILTER (WHERE amount > 0), 0)::bigint AS gross,
      coalesce(-sum(amount) FILTER (WHERE amount < 0), 0)::bigint AS refunded,
      coalesce(sum(fee), 0)::bigint AS fee, coalesce(sum(net), 0)::bigint AS net,
      coalesce(sum(fee) FILTER (WHERE type IN ('payment', 'order_payment')), 0)::bigint AS fee_at_payment,
      coalesce(sum(fee) FILTER (WHERE type = 'order_adjustment' AND amount > 0), 0)::bigint AS fee_on_adjustments,
      coalesce(-sum(fee) FILTER (WHERE amount < 0), 0)::bigint AS fee_returned
    FROM balance_transactions
    WHERE business_id = ${scope.businessId} AND environment = ${scope.environment}
      AND source_reference = ${reference} AND seller_id IS NULL`.execute(database.db);
  const sums = row.rows[0];
  if (!sums || Number(sums.n) === 0) return undefined;
  return {
    gross: Number(sums.gross),
    refunded: Number(sums.refunded),
    fee: Number(sums.fee),
    feeAtPayment: Number(sums.fee_at_payment),
    feeOnAdjustments: Number(sums.fee_on_adjustments),
    feeReturned: Number(sums.fee_returned),
    net: Number(sums.net),
  };
}

/** How many attempts a payment's or an order's page shows: more than any real history holds. */
const ATTEMPTS_SHOWN = 50;

/** The attempts to pay an intent or an order, newest first, for its page's timeline, with their total. */
export function paymentAttempts(db: Kysely<DB>, subject: PaymentSubject) {
  return listPayments(db, subject, { limit: ATTEMPTS_SHOWN, offset: 0 });
}
