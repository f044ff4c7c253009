import type { OrderItem, SplitLineRecord } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { ProductRow } from '../products/model.js';
import { lineTotal } from './pricing.js';

/**
 * An order split between the sellers of its lines' products (issue 52 item 2, decision 081): each
 * seller's gross share is what its products' lines add up to, less its `commissionBps` (kept by
 * the business, rounded in the business's favour as a rate's gross is: `floor`). The business
 * bears the provider fee, as an intent's split does by default; the payments module turns these
 * lines into shares (`splitShares`) and posts them.
 */
export async function orderSplitLines(
  db: Executor,
  items: readonly OrderItem[],
  products: ReadonlyMap<string, Pick<ProductRow, 'seller_id'>>,
): Promise<SplitLineRecord[]> {
  // One line per seller, in the order the cart first names it.
  const sold = new Map<string, number>();
  for (const item of items) {
    const seller = products.get(item.productId)?.seller_id;
    if (seller) sold.set(seller, (sold.get(seller) ?? 0) + lineTotal(item));
  }
  if (sold.size === 0) return [];
  const sellers = new Map(
    (
      await db
        .selectFrom('sellers')
        .select(['id', 'status', 'commission_bps'])
        .where('id', 'in', [...sold.keys()])
        .execute()
    ).map((row) => [row.id, row]),
  );
  const lines: SplitLineRecord[] = [];
  for (const [id, total] of sold) {
    const seller = sellers.get(id);
    // A DISABLED seller takes no new split (decision 079): its products' lines stay the business's.
    if (!seller || seller.status !== 'ACTIVE') continue;
    const gross = Number((BigInt(total) * BigInt(10_000 - seller.commission_bps)) / 10_000n);
    if (gross > 0) lines.push({ seller: id, amount: gross });
  }
  return lines;
}
