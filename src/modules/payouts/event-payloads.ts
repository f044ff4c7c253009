import { Type } from 'typebox';
import { literalUnion, Nullable, Timestamp } from '../../http/schemas.js';
import { Centimes } from '../events/envelopes.js';
import { PAYOUT_FAILURE_CODES, PAYOUT_STATUSES } from './state.js';

/** The data of every payout event: snake_case, in the money envelope as payment events are. */
export const PayoutEventData = Type.Object(
  {
    reference_number: Type.String({ description: 'PO-...' }),
    batch_id: Nullable(Type.String()),
    amount: Centimes,
    fee: Centimes,
    currency: Type.Literal('MRU'),
    status: literalUnion(PAYOUT_STATUSES),
    destination: Type.Object({
      type: Type.Literal('WALLET'),
      phone: Type.String({ description: 'masked: +222******78' }),
    }),
    description: Type.String(),
    metadata: Type.Record(Type.String(), Type.String()),
    failure_code: Nullable(literalUnion(PAYOUT_FAILURE_CODES)),
    failure_message: Nullable(Type.String()),
    created_at: Timestamp,
    seller: Type.Optional(
      Type.String({ description: "A seller's payout (decision 082): the seller (SL-...) it was paid from and to" }),
    ),
  },
  { title: 'PayoutEventData' },
);

/** When each payout event is sent, for the webhooks' documentation. */
export const payoutEventPayloads = {
  'payout.created': {
    when: 'A payout was created and its amount and fee reserved (status PENDING).',
    data: PayoutEventData,
  },
  'payout.paid': { when: 'The payout reached its wallet (status PAID).', data: PayoutEventData },
  'payout.failed': {
    when: 'The payout could not be paid (status FAILED, failure_code set); its amount and fee are back in the balance.',
    data: PayoutEventData,
  },
  'payout.cancelled': {
    when: 'The merchant cancelled the payout while PENDING; its amount and fee are back in the balance.',
    data: PayoutEventData,
  },
} as const;

type PayoutEventPayloads = { [N in keyof typeof payoutEventPayloads]: (typeof payoutEventPayloads)[N]['data'] };

declare module '../events/catalog.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into the registry: its members are inherited
  interface EventPayloads extends PayoutEventPayloads {}
}
