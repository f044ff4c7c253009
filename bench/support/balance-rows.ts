import type pg from 'pg';

/** When the rows of one fill fall, row 1 the newest, from now back as `g` grows. */
export type TimeSpan =
  /** Over `daysBack` days, in whole seconds: row `g` at now - g * daysBack days / count. */
  | { daysBack: number }
  /** Over the current month (UTC) from now back to its first second: row `g` at now - (now - month start) * g / (count + 1). */
  | 'current month';

export interface FillOptions {
  span: TimeSpan;
  /** Put before the tag in ids: `txn_<prefix><tag><g, 10 digits>`, `ltx_<prefix><tag><g>`. */
  idPrefix?: string;
  /** Put before the tag in source references, `PI-` or `OR-` then `<prefix><tag><g / 2, referenceDigits digits>`. */
  referencePrefix?: string;
  referenceDigits?: number;
  /** Rows per INSERT, so one statement's transition table (the counting trigger's input) stays bounded. */
  slice?: number;
}

/**
 * Inserts `count` balance transactions of one business and environment, newest first as `g`
 * grows, spread over `span`: 50% payments, 10% refunds, 25% order payments, 10% order refunds,
 * 5% order adjustments; the newest 20 not yet settled (no balance_after). `tag` keeps one fill's
 * ids and references apart from another's. The insert trigger keeps list_counts exact (under this
 * connection's slot, as a writer leaves them before the worker folds them).
 */
export async function fillTransactions(
  client: pg.Client,
  tag: string,
  businessId: string,
  environment: string,
  count: number,
  { span, idPrefix = '', referencePrefix = '', referenceDigits = 15, slice = 250_000 }: FillOptions,
): Promise<void> {
  const createdAt =
    span === 'current month'
      ? `now() - (now() - (date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')) * (s.g::float8 / ($4::float8 + 1))`
      : `now() - ((s.g::bigint * ${span.daysBack * 86_400}) / $4::bigint) * interval '1 second'`;
  for (let first = 1; first <= count; first += slice) {
    const last = Math.min(count, first + slice - 1);
    await client.query(
      `INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
         source_kind, description, ledger_transaction_id, balance_after, created_at)
       SELECT 'txn_' || $7 || $1 || lpad(s.g::text, 10, '0'), $2, $3, s.type, a.amount, a.fee, a.amount - a.fee,
         r.reference, r.kind, s.type || ' ' || r.reference, 'ltx_' || $7 || $1 || s.g,
         CASE WHEN s.g > 20 THEN 1000000 + (s.g * 104729) % 50000000 END,
         ${createdAt}
       FROM (
         SELECT g, 100 + (g * 7919) % 100000 AS base,
           CASE WHEN g % 20 < 10 THEN 'payment' WHEN g % 20 < 12 THEN 'refund' WHEN g % 20 < 17 THEN 'order_payment'
             WHEN g % 20 < 19 THEN 'order_refund' ELSE 'order_adjustment' END AS type
         FROM generate_series($5::bigint, $6::bigint) AS g
       ) AS s
       CROSS JOIN LATERAL (
         SELECT CASE WHEN s.type IN ('payment', 'order_payment') THEN s.base
           WHEN s.type IN ('refund', 'order_refund') THEN -(s.base / 2) ELSE s.base / 10 END::bigint AS amount
       ) AS m
       CROSS JOIN LATERAL (SELECT m.amount, m.amount * 2 / 100 AS fee) AS a
       CROSS JOIN LATERAL (
         SELECT CASE WHEN s.type IN ('payment', 'refund') THEN 'PI-' ELSE 'OR-' END
             || $8 || $1 || lpad((s.g / 2)::text, $9::int, '0') AS reference,
           CASE WHEN s.type IN ('payment', 'refund') THEN 'payment_intent' ELSE 'order' END AS kind
       ) AS r`,
      [tag, businessId, environment, count, first, last, idPrefix, referencePrefix, referenceDigits],
    );
  }
}
