import type pg from 'pg';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';

/**
 * The growth bench's history (bench/growth.ts): a template of real rows, written by the API and
 * the worker for one business, multiplied by set-based INSERT ... SELECT into many businesses and
 * days. Each copy `k` belongs to one business and one moment (growth_copies); its rows are the
 * template's with their timestamps moved back by the copy's shift, their ids made unique with a
 * suffix (text) or a stride (bigint), and the template business's own rows (ledger accounts,
 * webhook endpoints) replaced by the copy's business's. The insert triggers keep list_counts
 * right; the ledger accounts' balances are raised once by what their copied postings sum to.
 */

/** The tables a copy writes, parents first (their foreign keys). */
export const ACTIVITY_TABLES = [
  'payment_intents',
  'orders',
  'payouts',
  'payments',
  'refunds',
  'events',
  'webhook_deliveries',
  'webhook_attempts',
  'ledger_postings',
  'balance_transactions',
] as const;
type ActivityTable = (typeof ACTIVITY_TABLES)[number];

/** Text columns that name a row of a copy: suffixed with the copy's number, the same way wherever they appear. */
const COPY_IDS = new Set([
  'id',
  'reference_number',
  'short_code',
  'reference',
  'event_id',
  'delivery_id',
  'transaction_id',
  'ledger_transaction_id',
  'subject',
  'source_reference',
  'settled_by',
  'customer_ref',
]);
/** Bigint ids a copy's rows point to (identity columns of parents and the columns naming them). */
const COPY_BIGINT_IDS = new Set(['intent_id', 'order_id']);
/** Far above the template's ids: copy k's bigint ids are the template's plus k times this. */
const BIGINT_STRIDE = 10_000_000;

/** Which rows of each table the template is: those of `businessId` written since `since`. */
function templateWhere(table: ActivityTable): string {
  switch (table) {
    case 'refunds':
      return `intent_id IN (SELECT id FROM payment_intents WHERE business_id = $1)`;
    case 'webhook_attempts':
      return `delivery_id IN (SELECT id FROM webhook_deliveries WHERE business_id = $1)`;
    case 'ledger_postings':
      // Only the template business transacts after `since`; the wallets' funding is older.
      return `created_at >= $2 AND transaction_id NOT LIKE 'ltx_fund_%'`;
    default:
      return `business_id = $1`;
  }
}

interface Column {
  name: string;
  type: string;
  identity: boolean;
  referenced: boolean;
}

async function columnsOf(client: pg.Client, table: string): Promise<Column[]> {
  const { rows } = await client.query<{
    column_name: string;
    data_type: string;
    is_identity: string;
    referenced: boolean;
  }>(
    `SELECT c.column_name, c.data_type, c.is_identity,
       EXISTS (SELECT 1 FROM information_schema.referential_constraints r
         JOIN information_schema.constraint_column_usage u ON u.constraint_name = r.constraint_name
         WHERE u.table_name = c.table_name AND u.column_name = c.column_name) AS referenced
     FROM information_schema.columns c
     WHERE c.table_schema = 'public' AND c.table_name = $1 AND c.is_generated = 'NEVER'
     ORDER BY c.ordinal_position`,
    [table],
  );
  return rows.map((row) => ({
    name: row.column_name,
    type: row.data_type,
    identity: row.is_identity === 'YES',
    referenced: row.referenced,
  }));
}

/** What a copy writes in a column of `table`, as SQL over the template row `t` and the copy `c`; undefined: the column's default. */
function copyValue(column: Column): string | undefined {
  const { name } = column;
  if (column.identity) return column.referenced ? `t.${name} + c.k * ${BIGINT_STRIDE}` : undefined;
  if (name === 'business_id') return 'c.business_id';
  if (name === 'account_id')
    return `coalesce((SELECT m.account FROM growth_account_map m WHERE m.business_id = c.business_id AND m.template_account = t.account_id), t.account_id)`;
  if (name === 'endpoint_id') return 'em.endpoint';
  if (name === 'payment_code') return 'NULL';
  if (name === 'batch_id' || name === 'batch_index') return 'NULL';
  if (COPY_BIGINT_IDS.has(name)) return `t.${name} + c.k * ${BIGINT_STRIDE}`;
  if (COPY_IDS.has(name) && column.type === 'text') return `t.${name} || 'g' || c.k`;
  if (column.type === 'timestamp with time zone') return `t.${name} - c.shift`;
  return `t.${name}`;
}

/** Columns whose default an insert of today takes rather than the template's value. */
async function defaultedColumns(client: pg.Client, table: string): Promise<Set<string>> {
  const { rows } = await client.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name = $1
       AND (column_default LIKE 'nextval%' OR column_default LIKE '%pg_current_xact_id%')`,
    [table],
  );
  return new Set(rows.map((row) => row.column_name));
}

/** The template: each activity table's rows of the template business, kept in growth_template_<table>. */
export async function keepTemplate(
  client: pg.Client,
  businessId: string,
  since: Date,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ACTIVITY_TABLES) {
    await client.query(`DROP TABLE IF EXISTS growth_template_${table}`);
    await client.query(`CREATE UNLOGGED TABLE growth_template_${table} AS SELECT * FROM ${table} WITH NO DATA`);
    // Both parameters named in every statement: each table's filter uses one or both.
    const made = await client.query(
      `INSERT INTO growth_template_${table} SELECT * FROM ${table}
       WHERE ${templateWhere(table)} AND $1::text IS NOT NULL AND $2::timestamptz IS NOT NULL`,
      [businessId, since],
    );
    counts[table] = made.rowCount ?? 0;
  }
  return counts;
}

export interface CopyPlan {
  /** Business ids, and how much of the history each makes (its share of the copies). */
  businesses: { id: string; weight: number; endpoints: string[] }[];
  templateBusinessId: string;
  /** The template's endpoints, in the order the businesses' endpoints map to them. */
  templateEndpoints: string[];
  /** When the template was written: the copies' shifts are counted from it. */
  templateAt: Date;
  copies: number;
  months: number;
}

/**
 * growth_copies (k, business_id, shift): copy k to a business drawn by weight (deterministic),
 * at a moment spread evenly over the last `months` months (never in the last hour). The maps of
 * ledger accounts and endpoints: the template business's to each business's of the same kind.
 */
export async function planCopies(client: pg.Client, plan: CopyPlan): Promise<void> {
  const total = plan.businesses.reduce((sum, b) => sum + b.weight, 0);
  let upTo = 0;
  const bounds = plan.businesses.map((b) => (upTo += b.weight / total));
  await client.query(`DROP TABLE IF EXISTS growth_copies, growth_account_map, growth_endpoint_map`);
  await client.query(
    `CREATE UNLOGGED TABLE growth_copies (k bigint PRIMARY KEY, business_id text NOT NULL, shift interval NOT NULL)`,
  );
  const seconds = plan.months * 30 * 86_400 - 3600;
  await client.query(
    `INSERT INTO growth_copies (k, business_id, shift)
     SELECT k, ($1::text[])[least(width_bucket(((k * 7919) % 100003) / 100003.0, $2::float8[]) + 1, $5)],
       ($3::timestamptz - (now() - make_interval(secs => 3600 + ((k * 104729) % $4::bigint))))
     FROM generate_series(1, $6::bigint) AS k`,
    [
      plan.businesses.map((b) => b.id),
      bounds.slice(0, -1),
      plan.templateAt,
      seconds,
      plan.businesses.length,
      plan.copies,
    ],
  );
  await client.query(
    `CREATE UNLOGGED TABLE growth_account_map AS
     SELECT b.id AS business_id, t.id AS template_account, a.id AS account
     FROM ledger_accounts t JOIN businesses b ON b.id = ANY($2::text[])
     JOIN ledger_accounts a ON a.environment = t.environment AND a.kind = t.kind AND a.owner_id = b.id
     WHERE t.owner_id = $1`,
    [plan.templateBusinessId, plan.businesses.map((b) => b.id)],
  );
  await client.query(`ALTER TABLE growth_account_map ADD PRIMARY KEY (business_id, template_account)`);
  await client.query(
    `CREATE UNLOGGED TABLE growth_endpoint_map (business_id text, template_endpoint text, endpoint text)`,
  );
  for (const business of plan.businesses) {
    for (const [i, endpoint] of business.endpoints.entries()) {
      const template = plan.templateEndpoints[i];
      if (template)
        await client.query(`INSERT INTO growth_endpoint_map VALUES ($1, $2, $3)`, [business.id, template, endpoint]);
    }
  }
}

/** The joins a table's copies need beyond the template and the copy. */
function joinsOf(table: ActivityTable): string {
  if (table === 'webhook_deliveries')
    return `JOIN growth_endpoint_map em ON em.business_id = c.business_id AND em.template_endpoint = t.endpoint_id`;
  if (table === 'webhook_attempts')
    // An attempt of a delivery to an endpoint the copy's business lacks is not copied (nor its delivery).
    return `JOIN growth_template_webhook_deliveries d ON d.id = t.delivery_id
      JOIN growth_endpoint_map em ON em.business_id = c.business_id AND em.template_endpoint = d.endpoint_id`;
  return '';
}

/** Writes copies first..last of every activity table; answers the rows written per table. */
export async function writeCopies(
  client: pg.Client,
  first: number,
  last: number,
  counts: Record<string, number> = {},
): Promise<Record<string, number>> {
  for (const table of ACTIVITY_TABLES) {
    const defaulted = await defaultedColumns(client, table);
    const columns = (await columnsOf(client, table)).filter((column) => !defaulted.has(column.name));
    const written = columns
      .map((column) => ({ column, value: copyValue(column) }))
      .filter((each): each is { column: Column; value: string } => each.value !== undefined);
    const overriding = written.some(({ column }) => column.identity) ? 'OVERRIDING SYSTEM VALUE' : '';
    const result = await client.query(
      `INSERT INTO ${table} (${written.map(({ column }) => column.name).join(', ')}) ${overriding}
       SELECT ${written.map(({ value }) => value).join(', ')}
       FROM growth_template_${table} t JOIN growth_copies c ON c.k BETWEEN $1 AND $2 ${joinsOf(table)}`,
      [first, last],
    );
    counts[table] = (counts[table] ?? 0) + (result.rowCount ?? 0);
  }
  return counts;
}

/**
 * After the copies: the identity sequences past the copies' ids, and each ledger account's balance
 * raised by what its copied postings sum to (one UPDATE), so `ledger check` holds.
 */
export async function settleCopies(client: pg.Client): Promise<void> {
  for (const table of ['payment_intents', 'orders']) {
    await client.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT max(id) FROM ${table}))`);
  }
  await client.query(
    `WITH sums AS (SELECT account_id, sum(amount) AS total FROM growth_template_ledger_postings GROUP BY account_id),
     per_business AS (SELECT business_id, count(*) AS copies FROM growth_copies GROUP BY business_id),
     deltas AS (
       SELECT coalesce(m.account, s.account_id) AS account, sum(s.total * p.copies) AS delta
       FROM sums s CROSS JOIN per_business p
       LEFT JOIN growth_account_map m ON m.business_id = p.business_id AND m.template_account = s.account_id
       GROUP BY 1)
     UPDATE ledger_accounts a SET balance = a.balance + d.delta FROM deltas d WHERE a.id = d.account`,
  );
  await client.query(
    `DROP TABLE IF EXISTS growth_copies, growth_account_map, growth_endpoint_map, ${ACTIVITY_TABLES.map((t) => `growth_template_${t}`).join(', ')}`,
  );
}

/** The months (first days, UTC, `YYYY-MM-01`) from `months` back to next month. */
export function monthsBack(months: number): { from: string; to: string } {
  const now = new Date();
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - months - 1, 1));
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10) };
}

/**
 * Month partitions for the history, when the schema has them (src/db/partitions.ts, issue 55):
 * without them, rows of past months would all land in the default partition. Imported by a
 * computed path, so this bench runs on a schema without partitions too.
 */
export async function ensurePartitionsIfAny(db: Kysely<DB>, months: number): Promise<string> {
  const modulePath = ['..', '..', 'src', 'db', 'partitions.js'].join('/');
  let partitions: { ensureMonthlyPartitions?: (db: Kysely<DB>, from: unknown, to: unknown) => Promise<unknown> };
  try {
    partitions = (await import(modulePath)) as typeof partitions;
  } catch {
    return 'no partitions module (src/db/partitions.ts): plain tables';
  }
  if (typeof partitions.ensureMonthlyPartitions !== 'function') return 'partitions.ts has no ensureMonthlyPartitions';
  const { from, to } = monthsBack(months);
  await partitions.ensureMonthlyPartitions(db, new Date(`${from}T00:00:00Z`), new Date(`${to}T00:00:00Z`));
  return `month partitions ensured from ${from} to ${to}`;
}
