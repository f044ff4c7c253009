import { Type } from 'typebox';
import { literalUnion, Nullable, Timestamp } from '../../http/schemas.js';
import { Centimes } from '../events/envelopes.js';
import { PAYMENT_REQUEST_STATUSES } from '../../db/schema.js';

/** The data of every payment request event: snake_case, in the money envelope as payment events are. */
export const PaymentRequestEventData = Type.Object(
  {
    id: Type.String({ description: 'PR-...' }),
    intent: Type.String({ description: "The intent's PI- reference" }),
    status: literalUnion(PAYMENT_REQUEST_STATUSES),
    amount: Centimes,
    currency: Type.Literal('MRU'),
    phone: Type.String({ description: 'masked: +222******78' }),
    message: Nullable(Type.String()),
    failure_code: Nullable(Type.String()),
    expires_at: Timestamp,
    created_at: Timestamp,
    ended_at: Nullable(Timestamp),
  },
  { title: 'PaymentRequestEventData' },
);

/** When each payment request event is sent, for the webhooks' documentation. */
export const paymentRequestEventPayloads = {
  'payment_request.created': {
    when: "A request was pushed to the payer's wallet (status PENDING).",
    data: PaymentRequestEventData,
  },
  'payment_request.approved': {
    when: 'The payer approved and the intent was paid (status APPROVED); `payment.confirmed` comes with it.',
    data: PaymentRequestEventData,
  },
  'payment_request.declined': { when: 'The payer declined (status DECLINED).', data: PaymentRequestEventData },
  'payment_request.expired': {
    when: 'The payer did not answer in time, or the intent expired first (status EXPIRED).',
    data: PaymentRequestEventData,
  },
  'payment_request.cancelled': {
    when: 'The merchant cancelled the request, or its intent was cancelled or paid another way (status CANCELLED).',
    data: PaymentRequestEventData,
  },
  'payment_request.failed': {
    when: 'The payer approved but the payment failed, e.g. too little balance (status FAILED, `failure_code`); the intent stays payable.',
    data: PaymentRequestEventData,
  },
} as const;

type PaymentRequestEventPayloads = {
  [N in keyof typeof paymentRequestEventPayloads]: (typeof paymentRequestEventPayloads)[N]['data'];
};

declare module '../events/catalog.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into the registry: its members are inherited
  interface EventPayloads extends PaymentRequestEventPayloads {}
}
