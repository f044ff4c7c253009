import { Type } from 'typebox';
import { literalUnion, Nullable, Timestamp } from '../../http/schemas.js';
import { Centimes } from '../events/envelopes.js';
import { PAYMENT_LINK_STATUSES } from '../../db/schema.js';

/** The data of a payment link event: snake_case, as payment events are. */
export const PaymentLinkEventData = Type.Object(
  {
    reference_number: Type.String({ description: 'PL-...' }),
    label: Type.String(),
    status: literalUnion(PAYMENT_LINK_STATUSES),
    payments_count: Type.Integer(),
    max_payments: Nullable(Type.Integer()),
    amount_collected: Centimes,
    currency: Type.Literal('MRU'),
    metadata: Type.Record(Type.String(), Type.String()),
    created_at: Timestamp,
  },
  { title: 'PaymentLinkEventData' },
);

/** When each payment link event is sent, for the webhooks' documentation. */
export const paymentLinkEventPayloads = {
  'payment_link.completed': {
    when: 'A payment through the link reached its `maxPayments` (status COMPLETED); the link takes no more payments.',
    data: PaymentLinkEventData,
  },
} as const;

type PaymentLinkEventPayloads = {
  [N in keyof typeof paymentLinkEventPayloads]: (typeof paymentLinkEventPayloads)[N]['data'];
};

declare module '../events/catalog.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into the registry: its members are inherited
  interface EventPayloads extends PaymentLinkEventPayloads {}
}
