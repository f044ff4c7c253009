import type { Transaction } from 'kysely';
import type { DB, Environment, OrderFees, RevenueModel, SplitLineRecord } from '../../db/schema.js';
import {
  chargeCommission,
  linesProviderFee,
  NO_FEES,
  refundCommission,
  withCharge,
  withRefund,
  type Commission,
  type FeePlan,
  type MarginLine,
} from './fees.js';
import { postTransfer } from './ledger.js';
import type { Payer } from './payers.js';
import { sellersTaken } from './split-refunds.js';
import { refundTakes, splitShares, type SplitShare } from './splits.js';
import { walletCharge, walletRefund, type WalletCharge } from './wallet-payments.js';

/**
 * The money of orders: the charge that pays an order, the charge of a modification's higher
 * total, and every return (refund, cancel, lower total). An order may be charged several times,
 * so its fee state (`OrderFees`: its plan when paid and `FeeState`) travels with the order.
 */

export interface OrderMoneyRef {
  environment: Environment;
  businessId: string;
  /** The order's reference: the source of its balance transactions. */
  orderReference: string;
}

/** The plan an order was paid under, as its fee state keeps it. */
export function orderPlan(fees: OrderFees): FeePlan {
  return {
    providerBps: fees.providerBps,
    payerFee: 0,
    tofBps: fees.tofBps,
    tteBps: fees.tteBps,
    revenueModel: fees.revenueModel ?? 'COMMISSION',
    marginBps: fees.marginBps ?? 0,
  };
}

/**
 * The payment of a new order: its lines' commission (`linesProviderFee`, so the MARGIN model
 * applies) plus the payer fee, out of the payer's locked wallet. A split (its sellers' lines,
 * decision 081) is settled in the same posting, the business bearing the provider fee (what its
 * lines leave short of it, the sellers', as a fee: `splitShares`). Returns
 * the fee state and the sellers' shares the order keeps, or INSUFFICIENT_BALANCE with nothing built.
 */
export function chargeOrder(
  order: OrderMoneyRef,
  charge: {
    payer: Payer;
    amount: number;
    lines: readonly MarginLine[];
    plan: FeePlan;
    split?: readonly SplitLineRecord[] | undefined;
    now: Date;
  },
): (WalletCharge & { fees: OrderFees; split: SplitShare[] | null }) | 'INSUFFICIENT_BALANCE' {
  const { plan } = charge;
  const commission = chargeCommission(linesProviderFee(charge.lines, plan), plan.payerFee, plan);
  const split = charge.split?.length
    ? splitShares(charge.amount, commission.provider_ttc, 'BUSINESS', charge.split)
    : null;
  const paid = walletCharge({
    environment: order.environment,
    businessId: order.businessId,
    reference: order.orderReference,
    payer: charge.payer,
    amount: charge.amount,
    commission,
    balance: {
      type: 'order_payment',
      source: { reference: order.orderReference, kind: 'order' },
      detail: {},
    },
    split: split ?? undefined,
    now: charge.now,
  });
  if (paid === 'INSUFFICIENT_BALANCE') return paid;
  const fees: OrderFees = {
    providerBps: plan.providerBps,
    tofBps: plan.tofBps,
    tteBps: plan.tteBps,
    revenueModel: plan.revenueModel,
    marginBps: plan.marginBps,
    ...withCharge(NO_FEES, charge.amount, commission),
  };
  return { ...paid, fees, split };
}

/**
 * A modification's higher total, charged to the wallet that paid without a second payer fee. Its
 * provider fee is what the new lines cost less what the old lines cost, between zero and the
 * difference charged, so under MARGIN a change of lines pays on the margin it adds.
 */
export async function chargeOrderDifference(
  trx: Transaction<DB>,
  order: OrderMoneyRef & { fees: OrderFees },
  charge: {
    reference: string;
    payer: Payer;
    amount: number;
    lines: { before: readonly MarginLine[]; after: readonly MarginLine[] };
    now: Date;
  },
): Promise<{ ledgerTransactionId: string; fees: OrderFees } | 'INSUFFICIENT_BALANCE'> {
  const plan = orderPlan(order.fees);
  // Never more than the difference itself: a change of lines can add more margin than money (a
  // product without cost basis swapped for one that costs nothing), and the merchant must never
  // pay out of its balance for a customer's payment.
  const providerTtc = Math.min(
    charge.amount,
    Math.max(0, linesProviderFee(charge.lines.after, plan) - linesProviderFee(charge.lines.before, plan)),
  );
  const commission = chargeCommission(providerTtc, 0, plan);
  const paid = walletCharge({
    environment: order.environment,
    businessId: order.businessId,
    reference: charge.reference,
    payer: charge.payer,
    amount: charge.amount,
    commission,
    balance: {
      type: 'order_adjustment',
      source: { reference: order.orderReference, kind: 'order' },
      detail: { reference: charge.reference },
    },
    now: charge.now,
  });
  if (paid === 'INSUFFICIENT_BALANCE') return paid;
  return {
    ledgerTransactionId: await postTransfer(trx, paid.transfer),
    fees: { ...order.fees, ...withCharge(order.fees, charge.amount, commission) },
  };
}

/**
 * Gives `amount` of a paid order back to the wallet that paid, with the fees returned as
 * `refundCommission` says (`final` when nothing is left to return after it), and says where the
 * order's fee state goes next. A lower total after a modification is an adjustment; a refund or
 * a cancel is a refund. Each seller of a split gives back its net share in proportion to what was
 * returned of what was charged, rounded up, less what earlier returns took (`refundTakes`,
 * decision 081), never so much that the business's line would go below zero: every return,
 * refund or lower total, counts, a rise goes to the business (it grows `charged`, so no seller
 * gives back more than its share), and the one that returns all that was charged takes back
 * every share exactly.
 */
export async function returnOrderMoney(
  trx: Transaction<DB>,
  order: OrderMoneyRef & { fees: OrderFees; walletId: string; split: readonly SplitShare[] | null },
  money: { amount: number; reference: string; as: 'order_refund' | 'order_adjustment'; final: boolean; now: Date },
): Promise<{ ledgerTransactionId: string; fees: OrderFees }> {
  const commission = refundCommission(order.fees, money.amount, money.final);
  const transfer = await walletRefund(trx, {
    environment: order.environment,
    businessId: order.businessId,
    walletId: order.walletId,
    reference: money.reference,
    amount: money.amount,
    commission,
    sellers: order.split
      ? refundTakes(
          order.split,
          { after: order.fees.returned + money.amount, of: order.fees.charged },
          await sellersTaken(trx, {
            environment: order.environment,
            businessId: order.businessId,
            reference: order.orderReference,
            types: ['order_refund', 'order_adjustment'],
          }),
          money.amount - commission.provider_ttc,
        )
      : [],
    balance: {
      type: money.as,
      source: { reference: order.orderReference, kind: 'order' },
      detail: { reference: money.reference },
    },
    now: money.now,
  });
  return {
    ledgerTransactionId: await postTransfer(trx, transfer),
    fees: { ...order.fees, ...withRefund(order.fees, money.amount, commission) },
  };
}

/**
 * What the platform holds of an order's fees now: what its charges took less what its returns
 * gave back, with the revenue model it was charged under (the order's `commission`).
 */
export function heldCommission(fees: OrderFees): Commission & { revenue_model: RevenueModel } {
  const tof = fees.tof - fees.tofReturned;
  const tte = fees.tte - fees.tteReturned;
  const providerTtc = fees.providerTtc - fees.providerReturned;
  return {
    provider_ttc: providerTtc,
    payer_ttc: fees.payerTtc,
    tof,
    tte,
    total_revenue: providerTtc + fees.payerTtc - tof - tte,
    revenue_model: fees.revenueModel ?? 'COMMISSION',
  };
}
