import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { findSeller, findSellers, type SellerRow } from './store.js';

/**
 * The one answer to "is this seller the caller's?" (decision 079), wherever a request names a
 * seller: a path, a query's `seller`, a body's `seller` or a split's lines. The schema (SellerId)
 * has already refused a malformed id with 400 VALIDATION_ERROR; here a well-formed id that is not
 * the caller's business's (or no seller at all) is 404 SELLER_NOT_FOUND, naming the field, and one
 * of the other environment is 403 SANDBOX_MISMATCH. Found by id, then business, then environment,
 * so another business's seller never tells which environment it is in.
 */
function judged(row: SellerRow | undefined, caller: Caller, id: string, field: string): SellerRow {
  if (!row || row.business_id !== caller.businessId)
    throw new ApiError('SELLER_NOT_FOUND', `No seller ${id} (${field}).`);
  if (row.environment !== caller.environment) throw new ApiError('SANDBOX_MISMATCH');
  return row;
}

/** The caller's seller `id`, as `field` names it; `lock`: its row locked for a change. */
export async function visibleSeller(
  db: Executor | Kysely<DB>,
  caller: Caller,
  id: string,
  field: string,
  options: { lock?: boolean } = {},
): Promise<SellerRow> {
  return judged(await findSeller(db, id, options), caller, id, field);
}

/** Several sellers of the caller's in one read (a split's lines), judged in the order given. */
export async function visibleSellers(
  db: Executor,
  caller: Caller,
  named: readonly { id: string; field: string }[],
): Promise<SellerRow[]> {
  const found = new Map(
    (
      await findSellers(
        db,
        named.map((name) => name.id),
      )
    ).map((row) => [row.id, row]),
  );
  return named.map((name) => judged(found.get(name.id), caller, name.id, name.field));
}

/**
 * 409 SELLER_DISABLED where a DISABLED seller cannot take the act (a new split, a product); it
 * keeps its balance and can still be read and paid out (decision 079). `refusal` says what it
 * cannot take and what was not written.
 */
export function refuseDisabled(seller: SellerRow, field: string, refusal: string): void {
  if (seller.status === 'DISABLED') {
    throw new ApiError('SELLER_DISABLED', `Seller ${seller.id} (${field}) is DISABLED: ${refusal}`);
  }
}
