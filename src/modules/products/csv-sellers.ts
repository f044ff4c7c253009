import Value from 'typebox/value';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { SellerId } from '../sellers/schemas.js';
import { checkProductSeller } from './sellers.js';

/** Whether a cell of the CSV's `seller` column is a seller's id as a request names it (blank is none). */
export const isSellerId = (cell: string): boolean => Value.Check(SellerId, cell);

/**
 * The sellers an import's rows name, each checked once as `PUT /store/products/{id}` checks its
 * `seller` (SELLER_NOT_FOUND, SANDBOX_MISMATCH, SELLER_DISABLED): the refusal of each one refused.
 * The import applies a refusal only to a row that gives its product a seller it does not have
 * yet, as the API does: a product keeps a seller disabled since.
 */
export async function sellerRefusals(
  db: Executor,
  caller: Caller,
  sellers: Iterable<string>,
): Promise<Map<string, ApiError>> {
  const refused = new Map<string, ApiError>();
  for (const seller of new Set(sellers)) {
    try {
      await checkProductSeller(db, caller, seller, 'seller');
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      refused.set(seller, error);
    }
  }
  return refused;
}
