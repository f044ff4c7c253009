import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB, Environment, SellerPayoutSchedule, SellersTable, SellerStatus } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import type { EventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';

export type SellerRow = Selectable<SellersTable>;

export interface NewSeller {
  id: string;
  businessId: string;
  environment: Environment;
  name: string;
  phone: string;
  commissionBps: number;
  payoutSchedule: SellerPayoutSchedule;
  metadata: Record<string, string>;
  createdAt: Date;
}

/**
 * A seller, its ledger account (the table's trigger, migration 044) and `seller.created`, in one
 * statement of the caller's transaction.
 */
export async function insertSeller(
  trx: Executor,
  seller: NewSeller,
  event: (row: SellerRow) => EventRecord,
): Promise<SellerRow> {
  const row: SellerRow = {
    id: seller.id,
    business_id: seller.businessId,
    environment: seller.environment,
    name: seller.name,
    phone: seller.phone,
    commission_bps: seller.commissionBps,
    status: 'ACTIVE',
    payout_schedule: seller.payoutSchedule,
    metadata: seller.metadata,
    created_at: seller.createdAt,
    updated_at: seller.createdAt,
  };
  const [inserted] = await unitOfWork()
    .change(
      trx
        .insertInto('sellers')
        .values({ ...row, metadata: JSON.stringify(row.metadata) })
        .returningAll(),
    )
    .events([event(row)])
    .run(trx);
  return inserted!;
}

export async function findSeller(
  db: Executor | Kysely<DB>,
  id: string,
  options: { lock?: boolean } = {},
): Promise<SellerRow | undefined> {
  const query = db.selectFrom('sellers').selectAll().where('id', '=', id);
  // NO KEY UPDATE: rows that will name the seller (a split) hold KEY SHARE on it, which a change need not wait for.
  return (options.lock ? query.forNoKeyUpdate() : query).executeTakeFirst();
}

export async function listSellers(
  db: Kysely<DB>,
  caller: Caller,
  query: { status: SellerStatus | undefined; limit: number; offset: number },
): Promise<{ items: SellerRow[]; total: number }> {
  const filter = sql.join(
    [
      sql`s.business_id = ${caller.businessId}`,
      sql`s.environment = ${caller.environment}`,
      ...(query.status ? [sql`s.status = ${query.status}`] : []),
    ],
    sql` AND `,
  );
  const [items, count] = await Promise.all([
    sql<SellerRow>`SELECT s.* FROM sellers s WHERE ${filter}
      ORDER BY s.created_at DESC, s.id DESC LIMIT ${query.limit} OFFSET ${query.offset}`.execute(db),
    sql<{ n: number }>`SELECT count(*)::int AS n FROM sellers s WHERE ${filter}`.execute(db),
  ]);
  return { items: items.rows, total: Number(count.rows[0]?.n ?? 0) };
}

/** What a merchant may change of a seller, as columns; absent: unchanged. */
export interface SellerChange {
  name?: string;
  phone?: string;
  commission_bps?: number;
  status?: SellerStatus;
  payout_schedule?: SellerPayoutSchedule;
  /** The whole new metadata, replacing the old (as a payment link's PATCH does). */
  metadata?: Record<string, string>;
}

/** The change as its columns: metadata is stored as JSON text. */
function columnsOf({ metadata, ...rest }: SellerChange) {
  return metadata === undefined ? rest : { ...rest, metadata: JSON.stringify(metadata) };
}

/** The change and `seller.updated`, in one statement. */
export async function updateSeller(
  trx: Executor,
  id: string,
  change: SellerChange,
  now: Date,
  event: EventRecord,
): Promise<SellerRow> {
  const [updated] = await unitOfWork()
    .change(
      trx
        .updateTable('sellers')
        .set({ ...columnsOf(change), updated_at: now })
        .where('id', '=', id)
        .returningAll(),
    )
    .events([event])
    .run(trx);
  return updated!;
}

/** The sellers a split names, in one read (lookup.ts judges whose they are). */
export async function findSellers(db: Executor, ids: readonly string[]): Promise<SellerRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('sellers')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
}
