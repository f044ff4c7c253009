import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { refuseDisabled, visibleSeller } from '../sellers/lookup.js';

/**
 * A product's seller (issue 52, decision 081): one of the business's sellers in the product's
 * environment, ACTIVE when it is attached, answered as everywhere a seller is named
 * (sellers/lookup.ts: SELLER_NOT_FOUND, SANDBOX_MISMATCH, SELLER_DISABLED). A product keeps a
 * seller disabled after it was attached; its lines then settle to the business (orders/splits.ts).
 */
export async function checkProductSeller(db: Executor, caller: Caller, sellerId: string, field: string): Promise<void> {
  const seller = await visibleSeller(db, caller, sellerId, field);
  refuseDisabled(seller, field, 'a product cannot be given to it. Nothing was changed.');
}
