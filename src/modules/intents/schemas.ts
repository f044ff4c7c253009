import { Type } from 'typebox';
import { E164_PATTERN } from '../../lib/phone.js';
import { Metadata } from '../../http/metadata.js';
import { DateFilter, literalUnion, Pagination, Timestamp, Nullable } from '../../http/schemas.js';
import { FEE_BEARERS } from '../../db/schema.js';
import { SellerId, sellerIdAs } from '../sellers/schemas.js';
import { AMOUNT_TYPES, INTENT_STATUSES } from './state.js';

const Status = literalUnion(INTENT_STATUSES);
const AmountType = literalUnion(AMOUNT_TYPES);
/** Also a payment link's (links/schemas.ts): one wording of the API's metadata (http/metadata.ts) and amounts. */
export { Metadata };
export const Centimes = Type.Integer({ description: 'Integer centimes (1/100 MRU)' });

/** A split line as the create takes it (decision 080): a fixed amount or a rate of the amount paid. */
const SplitLineInput = Type.Union([
  Type.Object(
    { seller: SellerId, amount: Type.Integer({ description: 'Centimes (FIXED intents)' }) },
    { additionalProperties: false },
  ),
  Type.Object(
    { seller: SellerId, bps: Type.Integer({ description: 'Basis points of the amount paid, 1 to 10000' }) },
    { additionalProperties: false },
  ),
]);

/** The intent's split: what was asked before it is paid, each seller's gross, fee and net once paid. */
const SplitLineView = Type.Union([
  Type.Object({ seller: Type.String(), gross: Centimes, fee: Centimes, net: Centimes }),
  Type.Object({ seller: Type.String(), amount: Centimes }),
  Type.Object({ seller: Type.String(), bps: Type.Integer() }),
]);

export const ReferenceParams = Type.Object({ referenceNumber: Type.String({ minLength: 1, maxLength: 64 }) });

export const CreateIntentBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({
        description: 'Centimes, 1 to the maximum (1,000,000 MRU by default). Optional for OPEN intents.',
      }),
    ),
    amountType: Type.Optional(AmountType),
    label: Type.Optional(Type.String({ maxLength: 200 })),
    metadata: Type.Optional(Metadata),
    success_url: Type.Optional(Type.String({ maxLength: 2048, description: 'http(s) URL' })),
    cancel_url: Type.Optional(Type.String({ maxLength: 2048, description: 'http(s) URL' })),
    splits: Type.Optional(
      Type.Array(SplitLineInput, {
        description:
          "The payment split between the business's sellers (1 to 10 lines; amounts or bps, not both; OPEN intents: bps only). The rest goes to the business.",
      }),
    ),
    feeBearer: Type.Optional(
      literalUnion(FEE_BEARERS, {
        description:
          'Who bears the provider fee of a split payment: BUSINESS (default: sellers get their gross exactly) or PROPORTIONAL (spread over the shares)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ListIntentsQuery = Type.Object(
  {
    status: Type.Optional(Status),
    seller: Type.Optional(sellerIdAs('Only the intents whose split names this seller (SL-...)')),
    from: Type.Optional(DateFilter),
    to: Type.Optional(DateFilter),
    ...Pagination,
  },
  { additionalProperties: false },
);

export const NoBody = Type.Object({}, { additionalProperties: false });

export const RefundBody = Type.Object(
  {
    amount: Type.Optional(Type.Integer({ description: 'Centimes; everything left to refund when absent' })),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const SimulateBody = Type.Object(
  {
    outcome: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failure')])),
    amount: Type.Optional(Type.Integer({ description: 'Required for OPEN intents; must match a FIXED amount' })),
    payerPhone: Type.Optional(Type.String({ pattern: E164_PATTERN, description: 'E.164' })),
  },
  { additionalProperties: false },
);

/** The create response of decisions.md "Payment intents". */
export const CreatedIntent = Type.Object(
  {
    referenceNumber: Type.String(),
    shortCode: Type.String(),
    code: Type.String({ description: '6-digit payment code' }),
    codeExpiresAt: Timestamp,
    payUrl: Type.String(),
    amount: Nullable(Centimes),
    amountType: AmountType,
    currency: Type.Literal('MRU'),
    label: Type.String(),
    status: Status,
    sandbox: Type.Boolean(),
    metadata: Metadata,
    expiresAt: Timestamp,
    createdAt: Timestamp,
    splits: Type.Optional(Type.Array(SplitLineView, { description: 'Only on a split intent: the split as asked' })),
    feeBearer: Type.Optional(literalUnion(FEE_BEARERS, { description: 'Only on a split intent' })),
  },
  { title: 'CreatedIntent' },
);

const Refund = Type.Object({
  id: Type.String(),
  amount: Centimes,
  reason: Nullable(Type.String()),
  status: Type.Literal('SUCCEEDED'),
  createdAt: Timestamp,
});

/** The full intent of api.md 2.2, as get, list and every action answer it. */
export const Intent = Type.Object(
  {
    referenceNumber: Type.String(),
    shortCode: Type.String(),
    code: Nullable(Type.String({ description: 'null once the intent is paid, cancelled or expired' })),
    codeExpiresAt: Nullable(Timestamp),
    payUrl: Type.String(),
    type: Type.Literal('API'),
    amount: Nullable(Centimes),
    suggestedAmount: Nullable(Centimes),
    amountType: AmountType,
    currency: Type.Literal('MRU'),
    label: Type.String(),
    status: Status,
    sandbox: Type.Boolean(),
    metadata: Metadata,
    payment: Nullable(Type.Object({ amountPaid: Centimes, paidAt: Timestamp, method: Type.String() })),
    refunds: Type.Array(Refund),
    totalAmountRefunded: Centimes,
    successUrl: Nullable(Type.String()),
    cancelUrl: Nullable(Type.String()),
    expiresAt: Timestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    paymentLink: Type.Optional(
      Type.String({ description: 'Only when made through a payment link: its `PL-` reference' }),
    ),
    payerName: Type.Optional(Type.String({ description: 'Only when the payment link asked the payer for it' })),
    payerNote: Type.Optional(
      Type.String({ description: 'Only when the payment link offered a note and the payer wrote one' }),
    ),
    splits: Type.Optional(
      Type.Array(SplitLineView, {
        description:
          "Only on a split intent: each seller's gross, fee and net once paid; before, the split as it was asked",
      }),
    ),
    feeBearer: Type.Optional(literalUnion(FEE_BEARERS, { description: 'Only on a split intent' })),
  },
  { title: 'Intent' },
);
