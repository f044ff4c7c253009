import { Type } from 'typebox';
import { literalUnion, Nullable, Timestamp } from '../../http/schemas.js';
import { Centimes } from '../events/envelopes.js';
import { Commission } from '../payments/schemas.js';
import { INTENT_STATUSES } from './state.js';

/** The data of every payment event (api.md 6.2): snake_case, as delivered. */
export const PaymentEventData = Type.Object(
  {
    reference_number: Type.String(),
    short_code: Type.String(),
    amount: Nullable(Centimes),
    currency: Type.Literal('MRU'),
    status: literalUnion(INTENT_STATUSES),
    paid_at: Nullable(Timestamp),
    payer_phone: Nullable(Type.String({ description: 'masked: +222******78' })),
    metadata: Type.Record(Type.String(), Type.String()),
    commission: Commission,
    refund_id: Type.Optional(Type.String({ description: 'payment.refunded only' })),
    amount_refunded: Type.Optional(Type.Integer({ description: 'payment.refunded only: this refund' })),
    total_amount_refunded: Type.Optional(Type.Integer({ description: 'payment.refunded only: every refund' })),
    payment_link: Type.Optional(
      Type.String({ description: 'Only for an intent made through a payment link: its `PL-` reference' }),
    ),
    payer_name: Type.Optional(Type.String({ description: 'Only when the payment link asked the payer for it' })),
    payer_note: Type.Optional(
      Type.String({ description: 'Only when the payment link offered a note and the payer wrote one' }),
    ),
    splits: Type.Optional(
      Type.Array(Type.Object({ seller: Type.String(), gross: Centimes, fee: Centimes, net: Centimes }), {
        description:
          "payment.confirmed of a split intent only: each seller's gross share, its part of the fee, its net",
      }),
    ),
    splits_refunded: Type.Optional(
      Type.Array(Type.Object({ seller: Type.String(), amount: Centimes }), {
        description:
          'payment.refunded of a split intent only: what each seller of the split gave back with this refund (0 when nothing)',
      }),
    ),
  },
  { title: 'PaymentEventData' },
);

/** When each payment event is sent, for the webhooks' documentation. */
export const paymentEventPayloads = {
  'payment.created': { when: 'An intent was created (status PENDING).', data: PaymentEventData },
  'payment.confirmed': {
    when: 'The payer confirmed with the wallet PIN (status PAID, commission filled).',
    data: PaymentEventData,
  },
  'payment.cancelled': { when: 'The intent was cancelled (status CANCELLED).', data: PaymentEventData },
  'payment.expired': {
    when: 'The intent expired 24 hours after creation, unpaid (status CANCELLED).',
    data: PaymentEventData,
  },
  'payment.refunded': { when: 'A refund (full or partial) was made (status REFUNDED).', data: PaymentEventData },
  'payment.failed': { when: 'A payment attempt failed for good.', data: PaymentEventData },
} as const;

type PaymentEventPayloads = {
  [N in keyof typeof paymentEventPayloads]: (typeof paymentEventPayloads)[N]['data'];
};

declare module '../events/catalog.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into the registry: its members are inherited
  interface EventPayloads extends PaymentEventPayloads {}
}
