import Value from 'typebox/value';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { refuseDisabled, visibleSellers } from '../sellers/lookup.js';
import { SellerId } from '../sellers/schemas.js';
import { checkProductSeller } from './sellers.js';

/** Whether a cell of the CSV's `seller` column is a seller's id as a request names it (blank is none). */
export const isSellerId = (cell: string): boolean => Value.Check(SellerId, cell);

const FIELD = 'seller';

/**
 * The sellers an import's rows name, each checked as `PUT /store/products/{id}` checks its
 * `seller` (SELLER_NOT_FOUND, SANDBOX_MISMATCH, SELLER_DISABLED): the refusal of each one refused.
 * All are looked up in one read (sellers/lookup.ts); that lookup stops at the first seller that is
 * not the caller's, so only then is each judged alone, to give every row its own code.
 * The import applies a refusal only to a row that gives its product a seller it does not have
 * yet, as the API does: a product keeps a seller disabled since.
 */
export async function sellerRefusals(
  db: Executor,
  caller: Caller,
  sellers: Iterable<string>,
): Promise<Map<string, ApiError>> {
  const named = [...new Set(sellers)];
  const refused = new Map<string, ApiError>();
  let found;
  try {
    found = await visibleSellers(
      db,
      caller,
      named.map((id) => ({ id, field: FIELD })),
    );
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    for (const seller of named) {
      const refusal = await refusalOf(() => checkProductSeller(db, caller, seller, FIELD));
      if (refusal) refused.set(seller, refusal);
    }
    return refused;
  }
  for (const seller of found) {
    const refusal = await refusalOf(async () =>
      refuseDisabled(seller, FIELD, 'a product cannot be given to it. Nothing was changed.'),
    );
    if (refusal) refused.set(seller.id, refusal);
  }
  return refused;
}

async function refusalOf(check: () => Promise<void>): Promise<ApiError | undefined> {
  try {
    await check();
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return error;
  }
}
