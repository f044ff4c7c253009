import type { Selectable } from 'kysely';
import type { ProductsTable, StoredVariant } from '../../db/schema.js';
import type { EventRecord } from '../events/outbox.js';
import { storeEvent } from '../events/store-events.js';

type ProductRow = Pick<
  Selectable<ProductsTable>,
  'id' | 'external_id' | 'name' | 'shop_id' | 'business_id' | 'environment' | 'low_stock_threshold'
>;

/**
 * api.md 6.4: `product.stock_low` once per downward crossing of the threshold (from at or above
 * it to below it), `product.stock_out` when the stock reaches 0. A drop from 10 to 0 sends both.
 * Unlimited stock (null) is above every threshold. Variant stock is watched the same way; those
 * events name the variant.
 */
export function stockEvents(
  product: ProductRow,
  before: number | null,
  after: number | null,
  variant?: Pick<StoredVariant, '_id' | 'label'>,
  at = new Date(),
): EventRecord[] {
  if (after === null) return [];
  const threshold = product.low_stock_threshold;
  const was = before ?? Number.POSITIVE_INFINITY;
  const scope = { businessId: product.business_id, environment: product.environment };
  const variantFields = variant ? { variantId: variant._id, variantLabel: variant.label } : {};
  const events: EventRecord[] = [];
  if (was >= threshold && after < threshold) {
    events.push(
      storeEvent(
        'product.stock_low',
        scope,
        product.id,
        {
          productId: product.id,
          externalId: product.external_id,
          name: product.name,
          quantity: after,
          lowStockThreshold: threshold,
          shopId: product.shop_id,
          ...variantFields,
        },
        at,
      ),
    );
  }
  if (was > 0 && after === 0) {
    events.push(
      storeEvent(
        'product.stock_out',
        scope,
        product.id,
        {
          productId: product.id,
          externalId: product.external_id,
          name: product.name,
          quantity: 0,
          shopId: product.shop_id,
          ...variantFields,
        },
        at,
      ),
    );
  }
  return events;
}

/** Stock events between two versions of a product: its own stock and each variant kept by `_id`. */
export function stockEventsBetween(
  before: ProductRow & { quantity: number | null; variants: StoredVariant[] },
  after: ProductRow & { quantity: number | null; variants: StoredVariant[] },
  at = new Date(),
): EventRecord[] {
  const events = stockEvents(after, before.quantity, after.quantity, undefined, at);
  for (const variant of after.variants) {
    const previous = before.variants.find((v) => v._id === variant._id);
    if (previous) events.push(...stockEvents(after, previous.quantity, variant.quantity, variant, at));
  }
  return events;
}
