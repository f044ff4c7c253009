import { Type } from 'typebox';
import { DateFilter, literalUnion, Nullable, Pagination, Timestamp } from '../../http/schemas.js';
import { Metadata } from '../../http/metadata.js';
import { E164_PATTERN } from '../../lib/phone.js';
import { sellerIdAs } from '../sellers/schemas.js';
import { PAYOUT_FAILURE_CODES, PAYOUT_STATUSES } from './state.js';

/** A batch holds at most this many payouts. */
export const MAX_BATCH_ITEMS = 1000;
/**
 * A batch's body may be this large, four times the API's 1 MB (decision 072): 1,000 items of about
 * 4 KB each, description and metadata included. The most metadata each item may carry (50 values
 * of 500 characters, some 27 KB an item) on every item of 1,000 is not accepted in one request;
 * such a batch is split.
 */
export const BATCH_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

const Status = literalUnion(PAYOUT_STATUSES);
const Centimes = Type.Integer({ description: 'Integer centimes (1/100 MRU)' });
const Destination = Type.Object(
  {
    type: Type.Literal('WALLET'),
    phone: Type.String({ pattern: E164_PATTERN, description: 'The wallet phone number, E.164 (+22220000001)' }),
  },
  { additionalProperties: false },
);

const PayoutFields = {
  amount: Type.Integer({ description: 'Centimes, at least 1, sent to the wallet; the fee is taken on top' }),
  destination: Destination,
  description: Type.Optional(Type.String({ maxLength: 200 })),
  metadata: Type.Optional(Metadata),
};

export const CreatePayoutBody = Type.Object(
  {
    ...PayoutFields,
    destination: Type.Optional(Destination),
    seller: Type.Optional(
      sellerIdAs(
        "A seller's payout (SL-...): paid from the seller's balance to the seller's phone; `destination`, if given, must be that phone. Without it, `destination` is required and the business's balance pays",
      ),
    ),
  },
  { additionalProperties: false },
);

export const CreateBatchBody = Type.Object(
  {
    items: Type.Array(Type.Object(PayoutFields, { additionalProperties: false }), {
      minItems: 1,
      maxItems: MAX_BATCH_ITEMS,
      description: `1 to ${MAX_BATCH_ITEMS} payouts, reserved together or not at all`,
    }),
  },
  { additionalProperties: false },
);

export const ReferenceParams = Type.Object({
  referenceNumber: Type.String({ pattern: '^PO-[0-9]{16}$', description: 'PO-...' }),
});

export const BatchParams = Type.Object({ id: Type.String({ pattern: '^pob_[0-9A-Za-z]{1,40}$' }) });

export const ListPayoutsQuery = Type.Object(
  {
    status: Type.Optional(Status),
    batch: Type.Optional(Type.String({ pattern: '^pob_[0-9A-Za-z]{1,40}$', description: 'Only this batch' })),
    seller: Type.Optional(sellerIdAs("Only this seller's payouts (SL-...), paid from its balance")),
    from: Type.Optional(DateFilter),
    to: Type.Optional(DateFilter),
    ...Pagination,
  },
  { additionalProperties: false },
);

export const Payout = Type.Object(
  {
    referenceNumber: Type.String({ description: 'PO-...' }),
    amount: Centimes,
    fee: Type.Integer({ description: 'The payout fee, in centimes, taken from the balance on top of the amount' }),
    totalDebited: Type.Integer({ description: 'amount + fee: what the balance gave' }),
    currency: Type.Literal('MRU'),
    status: Status,
    destination: Destination,
    description: Type.String(),
    metadata: Metadata,
    failureCode: Nullable(literalUnion(PAYOUT_FAILURE_CODES)),
    failureMessage: Nullable(Type.String()),
    batchId: Nullable(Type.String()),
    seller: Nullable(Type.String({ description: "The seller (SL-...) whose balance paid it; null: the business's" })),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    paidAt: Nullable(Timestamp),
    failedAt: Nullable(Timestamp),
    cancelledAt: Nullable(Timestamp),
  },
  { title: 'Payout' },
);

export const PayoutBatch = Type.Object(
  {
    id: Type.String({ description: 'pob_...' }),
    itemCount: Type.Integer(),
    totalAmount: Centimes,
    totalFee: Centimes,
    currency: Type.Literal('MRU'),
    counts: Type.Object(Object.fromEntries(PAYOUT_STATUSES.map((status) => [status, Type.Integer()])), {
      description: 'How many of its payouts are in each status',
    }),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
  },
  { title: 'PayoutBatch' },
);

export const CreatedBatch = Type.Object(
  { ...PayoutBatch.properties, payouts: Type.Array(Payout, { description: 'In the order of the items' }) },
  { title: 'CreatedPayoutBatch' },
);
