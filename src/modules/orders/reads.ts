import type { Kysely, Transaction } from 'kysely';
import type { DB, OrderStatus } from '../../db/schema.js';
import { countedPage, type CountedTable } from '../../db/counted-list.js';
import type { Executor } from '../../db/transaction.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError } from '../../http/errors.js';
import { listPayments } from '../payments/store.js';
import type { Caller, OrderLocator, OrderRow } from './model.js';
import { ORDER_STATUSES } from './state.js';

function selectOrder(db: Executor, locator: OrderLocator) {
  const query = db.selectFrom('orders').selectAll();
  return 'customerRef' in locator
    ? query.where('customer_ref', '=', locator.customerRef)
    : query
        .where('reference_number', '=', locator.referenceNumber)
        .where('business_id', '=', locator.caller.businessId)
        .where('environment', '=', locator.caller.environment);
}

async function foundOrder(db: Executor, locator: OrderLocator, order: OrderRow | undefined): Promise<OrderRow> {
  if (!order) {
    if ('customerRef' in locator) throw new ApiError('ORDER_NOT_FOUND', 'No order with this link.');
    // api.md 5 rule 4: the business's order in the other environment is a mismatch, not missing.
    const where = { column: 'reference_number', value: locator.referenceNumber } as const;
    throw new ApiError(
      (await inOtherEnvironment(db, 'orders', where, locator.caller)) ? 'SANDBOX_MISMATCH' : 'ORDER_NOT_FOUND',
    );
  }
  return order;
}

/** The order a write changes, locked: concurrent actions on one order queue, and the loser finds the new status. */
export async function lockOrder(trx: Transaction<DB>, locator: OrderLocator): Promise<OrderRow> {
  return foundOrder(trx, locator, await selectOrder(trx, locator).forUpdate().executeTakeFirst());
}

export async function getOrder(db: Kysely<DB>, locator: OrderLocator): Promise<OrderRow> {
  return foundOrder(db, locator, await selectOrder(db, locator).executeTakeFirst());
}

/** A page of the order's payments (its attempts to be paid), newest first. */
export async function listOrderPayments(
  db: Kysely<DB>,
  locator: OrderLocator,
  page: { limit: number; offset: number },
) {
  return listPayments(db, { orderId: (await getOrder(db, locator)).id }, page);
}

const ORDERS: CountedTable = { list: 'orders', table: 'orders', tiebreak: 'reference_number' };

/** A page of a business's orders, newest first, with the exact number that match (counted-list.ts). */
export async function listOrders(
  db: Kysely<DB>,
  caller: Caller,
  query: {
    status?: OrderStatus | undefined;
    from?: Date | undefined;
    to?: Date | undefined;
    limit: number;
    offset: number;
  },
): Promise<{ items: OrderRow[]; total: number }> {
  return countedPage<OrderRow>(db, ORDERS, {
    businessId: caller.businessId,
    environment: caller.environment,
    statuses: query.status ? [query.status] : ORDER_STATUSES,
    filterRowsByStatus: query.status !== undefined,
    from: query.from,
    to: query.to,
    order: 'newest',
    limit: query.limit,
    offset: query.offset,
  });
}

export async function shopNames(db: Executor, shopIds: string[]): Promise<Map<string, string>> {
  if (shopIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('shops')
    .select(['id', 'name'])
    .where('id', 'in', [...new Set(shopIds)])
    .execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}
