import { Type } from 'typebox';
import { literalUnion, Nullable, Pagination, Timestamp } from '../../http/schemas.js';
import { E164_PATTERN } from '../../lib/phone.js';
import { PAYMENT_REQUEST_STATUSES } from '../../db/schema.js';
import { Centimes } from '../intents/schemas.js';

export const REQUEST_LIFETIME = { min: 60, max: 900, default: 300 } as const;
export const REQUEST_MESSAGE_MAX = 100;

export const RequestStatus = literalUnion(PAYMENT_REQUEST_STATUSES);

export const RequestParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const CreateRequestBody = Type.Object(
  {
    phone: Type.String({ pattern: E164_PATTERN, description: "The payer's wallet phone, E.164" }),
    expiresIn: Type.Optional(
      Type.Integer({
        minimum: REQUEST_LIFETIME.min,
        maximum: REQUEST_LIFETIME.max,
        description: `Seconds the payer has to answer: ${REQUEST_LIFETIME.min} to ${REQUEST_LIFETIME.max}, ${REQUEST_LIFETIME.default} by default; never past the intent's own expiresAt`,
      }),
    ),
    message: Type.Optional(
      Type.String({ maxLength: REQUEST_MESSAGE_MAX, description: 'Shown to the payer beside your name' }),
    ),
    amount: Type.Optional(
      Type.Integer({ description: 'Centimes: required for an OPEN intent; a FIXED intent asks its own amount' }),
    ),
  },
  { additionalProperties: false },
);

export const ListRequestsQuery = Type.Object({ ...Pagination }, { additionalProperties: false });

export const PaymentRequest = Type.Object(
  {
    id: Type.String({ description: '`PR-` and 16 digits' }),
    intent: Type.String({ description: "The intent's `PI-` reference" }),
    status: RequestStatus,
    amount: Centimes,
    currency: Type.Literal('MRU'),
    phone: Type.String({ description: 'The wallet asked, E.164' }),
    message: Nullable(Type.String()),
    failureCode: Nullable(
      Type.String({ description: "FAILED only: why the approved payment failed (the payment's failure code)" }),
    ),
    expiresAt: Type.String({
      format: 'date-time',
      description:
        "ISO 8601 UTC: when the payer's time is up, createdAt + expiresIn or the intent's expiresAt if sooner",
    }),
    createdAt: Timestamp,
    endedAt: Nullable(Timestamp),
  },
  { title: 'PaymentRequest' },
);
