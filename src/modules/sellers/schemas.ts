import { Type } from 'typebox';
import { SELLER_ID_PATTERN, SELLER_PAYOUT_SCHEDULES, SELLER_STATUSES } from '../../db/schema.js';
import { Metadata } from '../../http/metadata.js';
import { literalUnion, Pagination, Timestamp } from '../../http/schemas.js';
import { E164_PATTERN } from '../../lib/phone.js';

export const SellerStatus = literalUnion(SELLER_STATUSES);
export const PayoutSchedule = literalUnion(SELLER_PAYOUT_SCHEDULES, {
  description:
    "MANUAL (the default): paid out by `POST /payouts` with `seller`. DAILY: once a UTC day the worker pays an ACTIVE seller's whole available balance to its phone, less the payout fee, when that leaves more than 0",
});

/** A name's most characters (code points, as the schema counts them). */
export const SELLER_NAME_MAX = 200;
/** Basis points: 10,000 is the whole of the seller's share. */
export const MAX_BPS = 10_000;

const Name = Type.String({
  minLength: 1,
  maxLength: SELLER_NAME_MAX,
  description: 'The seller as the merchant names it; trimmed, and not blank',
});
const Phone = Type.String({ pattern: E164_PATTERN, description: "E.164: the wallet the seller's payouts go to" });
const CommissionBps = Type.Integer({
  minimum: 0,
  maximum: MAX_BPS,
  description: "What the business keeps of the seller's share of a payment, in basis points (0 to 10,000)",
});

export const CreateSellerBody = Type.Object(
  {
    name: Name,
    phone: Phone,
    commissionBps: Type.Optional(CommissionBps),
    payoutSchedule: Type.Optional(PayoutSchedule),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const UpdateSellerBody = Type.Object(
  {
    name: Type.Optional(Name),
    phone: Type.Optional(Phone),
    commissionBps: Type.Optional(CommissionBps),
    status: Type.Optional(SellerStatus),
    payoutSchedule: Type.Optional(PayoutSchedule),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ListSellersQuery = Type.Object(
  { status: Type.Optional(SellerStatus), ...Pagination },
  { additionalProperties: false },
);

export const Seller = Type.Object(
  {
    id: Type.String({ description: '`SL-` and 16 digits' }),
    name: Type.String(),
    phone: Type.String({ description: "E.164: where the seller's payouts go" }),
    commissionBps: Type.Integer({ description: "What the business keeps of the seller's share, in basis points" }),
    status: SellerStatus,
    payoutSchedule: PayoutSchedule,
    metadata: Metadata,
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Seller' },
);

/** A seller's id as a request names it. */
export const SellerId = Type.String({ pattern: SELLER_ID_PATTERN, description: 'A seller of the business (SL-...)' });

/** SellerId with what the id means where a request names it: one pattern for every place. */
export const sellerIdAs = (description: string) => Type.String({ ...SellerId, description });
