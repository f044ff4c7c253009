import { Type } from 'typebox';
import { literalUnion, Nullable, Pagination, Timestamp } from '../../http/schemas.js';
import { PAYMENT_FAILURES, PAYMENT_METHODS, PAYMENT_STATUSES } from './state.js';

const Centimes = Type.Integer({ description: 'integer centimes' });

/** The fees of a payment, as `payment.confirmed` and `payment.refunded` carry them and a payment keeps them. */
export const Commission = Type.Object({
  provider_ttc: Centimes,
  payer_ttc: Centimes,
  tof: Centimes,
  tte: Centimes,
  total_revenue: Centimes,
});

const SettlementLine = Type.Object({
  account: Type.String({
    description:
      "The kind of account credited: merchant (the merchant's balance: the amount less the provider fee and the sellers' shares), seller (a seller's net share of a split payment), revenue (the platform's share of the fees, taxes out), tof or tte (the taxes)",
  }),
  amount: Centimes,
  seller: Type.Optional(Type.String({ description: "A seller's line only: the seller's `SL-` id" })),
});

/** A payment: one attempt to pay an intent or an order (payments/store.ts `paymentView`). */
export const Payment = Type.Object(
  {
    id: Type.String({ description: 'pay_...' }),
    intent: Nullable(Type.String({ description: 'The PI- reference of the intent it pays; null for an order' })),
    order: Nullable(Type.String({ description: 'The OR- reference of the order it pays; null for an intent' })),
    method: literalUnion(PAYMENT_METHODS, {
      description: 'WALLET_PIN: a wallet and its PIN typed on a hosted page; SANDBOX: a test key simulated it',
    }),
    status: literalUnion(PAYMENT_STATUSES, {
      description: 'PROCESSING: the payer has not answered yet; SUCCEEDED: the money moved; FAILED: nothing moved',
    }),
    amount: Type.Integer({ description: 'Centimes asked for, without the payer fee' }),
    currency: Type.Literal('MRU'),
    payerPhone: Nullable(Type.String({ description: 'masked: +222******78' })),
    commission: Nullable(
      Type.Object(Commission.properties, { description: 'The fees it was charged under; null unless SUCCEEDED' }),
    ),
    settlement: Type.Array(SettlementLine, {
      description:
        'What it credited each account once SUCCEEDED (empty otherwise): the lines add up to amount + payer fee (`commission.payer_ttc`)',
    }),
    failure: Nullable(
      Type.Object({
        code: literalUnion(PAYMENT_FAILURES),
        message: Type.String(),
      }),
    ),
    sandbox: Type.Boolean(),
    createdAt: Timestamp,
    settledAt: Nullable(
      Type.String({ format: 'date-time', description: 'When the money moved; null unless SUCCEEDED' }),
    ),
  },
  { title: 'Payment' },
);

export const PaymentParams = Type.Object({ id: Type.String({ pattern: '^pay_[0-9A-Za-z]{1,40}$' }) });

/** The query of a list of one intent's or order's payments: pages only. */
export const ListPaymentsQuery = Type.Object({ ...Pagination }, { additionalProperties: false });

/** What the docs of every read of payments say a payment is. */
export const PAYMENT_ATTEMPTS =
  "A payment is one attempt to pay an intent or an order, whatever its outcome: `SUCCEEDED` (the money moved: `commission` and the `settlement` lines it credited, which add up to `amount` + the payer fee, and `settledAt`), `FAILED` (nothing moved: `failure.code` says why, such as INSUFFICIENT_BALANCE, INVALID_PIN, WALLET_LOCKED, SANDBOX_DECLINED or SIMULATED_FAILURE), or `PROCESSING` (a payer who has not answered yet). `method` is WALLET_PIN (a wallet and its PIN typed on a hosted page) or SANDBOX (`simulate` with a test key). The payer's phone is masked as in events.";
