import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { findSellers } from '../sellers/store.js';

/**
 * A product's seller (issue 52, decision 081): one of the business's sellers in the product's
 * environment, ACTIVE when it is attached, answered as an intent's split answers
 * (SELLER_NOT_FOUND, SANDBOX_MISMATCH, SELLER_DISABLED). A product keeps a seller disabled after
 * it was attached; its lines then settle to the business (orders/splits.ts).
 */
export async function checkProductSeller(db: Executor, caller: Caller, sellerId: string, field: string): Promise<void> {
  const [seller] = await findSellers(db, [sellerId]);
  if (!seller || seller.business_id !== caller.businessId) {
    throw new ApiError('SELLER_NOT_FOUND', `No seller ${sellerId} (${field}).`);
  }
  if (seller.environment !== caller.environment) throw new ApiError('SANDBOX_MISMATCH');
  if (seller.status === 'DISABLED') {
    throw new ApiError(
      'SELLER_DISABLED',
      `Seller ${sellerId} (${field}) is DISABLED: a product cannot be given to it. Nothing was changed.`,
    );
  }
}
