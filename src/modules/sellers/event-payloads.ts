import { Type } from 'typebox';
import { literalUnion, Timestamp } from '../../http/schemas.js';
import { SELLER_PAYOUT_SCHEDULES, SELLER_STATUSES } from '../../db/schema.js';

/** The data of every seller event: snake_case, in the money envelope as payment and payout events are. */
export const SellerEventData = Type.Object(
  {
    id: Type.String({ description: 'SL-...' }),
    name: Type.String(),
    phone: Type.String({ description: 'masked: +222******78' }),
    commission_bps: Type.Integer({ description: "What the business keeps of the seller's share, in basis points" }),
    status: literalUnion(SELLER_STATUSES),
    payout_schedule: literalUnion(SELLER_PAYOUT_SCHEDULES, {
      description: 'MANUAL, or DAILY: paid out by the worker once a UTC day',
    }),
    metadata: Type.Record(Type.String(), Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'SellerEventData' },
);

/** When each seller event is sent, for the webhooks' documentation. */
export const sellerEventPayloads = {
  'seller.created': { when: 'A seller was created (status ACTIVE, balance 0).', data: SellerEventData },
  'seller.updated': {
    when: 'A seller was changed (`name`, `phone`, `commissionBps`, `status` or `payoutSchedule`); the data is the seller after the change.',
    data: SellerEventData,
  },
} as const;

type SellerEventPayloads = {
  [N in keyof typeof sellerEventPayloads]: (typeof sellerEventPayloads)[N]['data'];
};

declare module '../events/catalog.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into the registry: its members are inherited
  interface EventPayloads extends SellerEventPayloads {}
}
