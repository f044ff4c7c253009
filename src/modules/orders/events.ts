import type { EventNameOf } from '../events/catalog.js';
import { eventRecord, type EventData, type EventRecord } from '../events/outbox.js';
import type { OrderRow } from './model.js';

/** The `order.new` data: exactly the fields of api.md 2.5. */
export function orderNewData(
  order: Pick<
    OrderRow,
    | 'reference_number'
    | 'shop_id'
    | 'status'
    | 'items'
    | 'total_amount'
    | 'customer_phone'
    | 'customer_name'
    | 'created_at'
  >,
  shopName: string,
) {
  return {
    referenceNumber: order.reference_number,
    shopId: order.shop_id,
    shopName,
    status: order.status,
    items: order.items.map(({ productId, name, quantity, price, variant, options }) => ({
      productId,
      name,
      quantity,
      price,
      ...(variant ? { variant: { label: variant.label, priceAdjustment: variant.priceAdjustment } } : {}),
      ...(options ? { options: options.map((o) => ({ name: o.name, priceAdjustment: o.priceAdjustment })) } : {}),
    })),
    totalAmount: order.total_amount,
    customerPhone: order.customer_phone,
    customerName: order.customer_name,
    createdAt: order.created_at.toISOString(),
  };
}

export function orderEvent<N extends EventNameOf<'order'>>(
  event: N,
  order: Pick<OrderRow, 'business_id' | 'environment' | 'reference_number'>,
  data: EventData<N>,
  at: Date,
): EventRecord {
  return eventRecord(
    event,
    { businessId: order.business_id, environment: order.environment },
    order.reference_number,
    data,
    at,
  );
}
