import type { Static } from 'typebox';
import { maskPhone } from '../../lib/phone.js';
import type { EventNameOf } from '../events/catalog.js';
import { eventRecord, type EventData, type EventRecord } from '../events/outbox.js';
import type { Seller } from './schemas.js';
import type { SellerRow } from './store.js';

export type SellerView = Static<typeof Seller>;

export function sellerView(seller: SellerRow): SellerView {
  return {
    id: seller.id,
    name: seller.name,
    phone: seller.phone,
    commissionBps: seller.commission_bps,
    status: seller.status,
    payoutSchedule: seller.payout_schedule,
    metadata: seller.metadata,
    sandbox: seller.environment === 'test',
    createdAt: seller.created_at.toISOString(),
    updatedAt: seller.updated_at.toISOString(),
  };
}

export type SellerEventName = EventNameOf<'seller'>;

/**
 * A seller event. The phone is masked, as a payout's destination is: events are copied to
 * receivers and their logs, and the full phone is read with the seller (`GET /sellers/{id}`).
 */
export function sellerEvent(event: SellerEventName, seller: SellerRow): EventRecord {
  const data: EventData<SellerEventName> = {
    id: seller.id,
    name: seller.name,
    phone: maskPhone(seller.phone),
    commission_bps: seller.commission_bps,
    status: seller.status,
    payout_schedule: seller.payout_schedule,
    metadata: seller.metadata,
    created_at: seller.created_at.toISOString(),
    updated_at: seller.updated_at.toISOString(),
  };
  return eventRecord(
    event,
    { businessId: seller.business_id, environment: seller.environment },
    seller.id,
    data,
    seller.updated_at,
  );
}
