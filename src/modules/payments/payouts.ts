import { sql, type Transaction } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import type { NamedCtes } from '../../db/named-ctes.js';
import { ApiError } from '../../http/errors.js';
import {
  balanceIn,
  lockAccounts,
  transfer,
  transfers,
  type AccountRef,
  type LedgerEntry,
  type LedgerTransfer,
} from './ledger.js';
import { payoutFeeCommission, type FeePlan } from './fees.js';
import type { BalanceDetail } from './balance-wording.js';

/**
 * The money of payouts. A payout moves money in two steps, each one ledger transaction:
 * - reserved when it is created: the amount (`payout`) and the fee (`payout_fee`) leave the
 *   merchant's account (a seller's payout: the seller's, decision 082) for the platform's
 *   `payouts` account, where they wait;
 * - then either paid: the amount goes on to the destination wallet and the fee to the platform's
 *   revenue and tax accounts; or returned, when the payout fails or is cancelled: the amount and
 *   the fee go back to the merchant (`payout_reversal`).
 * Whatever happens between the steps, the money is in exactly one place.
 */

export interface PayoutMoney {
  reference: string;
  amount: number;
  fee: number;
  /** What its balance transaction keeps besides the reference: the merchant's description as `label`. */
  detail: BalanceDetail;
}

const PAYOUTS = { kind: 'payouts' } as const;

/** Whose balance a payout is paid from: the business's, or one of its sellers' (decision 082). */
export interface PayoutOwner {
  businessId: string;
  environment: Environment;
  seller?: string | null | undefined;
}

/** The account a payout of `owner` leaves and returns to. */
function payoutAccount(owner: Pick<PayoutOwner, 'businessId' | 'seller'>): AccountRef {
  return owner.seller ? { kind: 'seller', ownerId: owner.seller } : { kind: 'merchant', ownerId: owner.businessId };
}

/** The owner's own balance transactions: the business's have no seller. */
const ownRows = (owner: PayoutOwner) => (owner.seller ? sql`seller_id = ${owner.seller}` : sql`seller_id IS NULL`);

/** Payouts one statement reserves: two ledger transactions and about 30 parameters each. */
export const MAX_PAYOUTS_PER_STATEMENT = 250;

function reservationEntries(owner: PayoutOwner, payout: PayoutMoney, at: Date) {
  const { environment, businessId } = owner;
  const merchant = payoutAccount(owner);
  const source = { reference: payout.reference, kind: 'payout' } as const;
  const entries: LedgerEntry[] = [
    {
      environment,
      businessId,
      kind: 'payout',
      reference: payout.reference,
      at,
      balance: { type: 'payout', amount: -payout.amount, source, detail: payout.detail },
      lines: [
        { account: merchant, amount: -payout.amount },
        { account: PAYOUTS, amount: payout.amount },
      ],
    },
  ];
  if (payout.fee > 0) {
    entries.push({
      environment,
      businessId,
      kind: 'payout',
      reference: payout.reference,
      at,
      balance: { type: 'payout_fee', amount: -payout.fee, source, detail: {} },
      lines: [
        { account: merchant, amount: -payout.fee },
        { account: PAYOUTS, amount: payout.fee },
      ],
    });
  }
  return entries;
}

/**
 * Locks the account a payout of `owner` leaves and reads what it holds, in the caller's
 * transaction (a daily payout sizes itself on it before reserving). A seller's account is locked
 * as a merchant's is: its payouts queue. Refunds append to it without the lock (decision 080), so
 * a refund that commits before this read is counted, one that commits after it may take the
 * account below zero (decision 082).
 */
export async function lockPayoutBalance(trx: Transaction<DB>, owner: PayoutOwner): Promise<number> {
  const account = payoutAccount(owner);
  return balanceIn(await lockAccounts(trx, owner.environment, [account]), account);
}

/**
 * The first half of reserving payouts, in the caller's transaction: the merchant's account is
 * locked (so that payouts and refunds of one merchant never overdraw it together), and if what it
 * holds cannot cover `needed` (every amount and fee), 402 INSUFFICIENT_FUNDS and nothing moves.
 * The lock is held until the transaction ends, so the reservation that follows cannot be outrun.
 */
export async function lockForPayouts(trx: Transaction<DB>, owner: PayoutOwner, needed: number): Promise<void> {
  const available = await lockPayoutBalance(trx, owner);
  if (available < needed) {
    throw new ApiError(
      'INSUFFICIENT_FUNDS',
      `The available balance (${available} centimes) cannot cover ${needed} centimes of payouts and fees. Nothing was reserved.`,
    );
  }
}

/**
 * The second half, as CTEs for the statement that inserts the payouts (a batch writes a few
 * hundred a statement, `MAX_PAYOUTS_PER_STATEMENT`): each payout's amount and fee to the
 * `payouts` account, and, when `settledBy` is given, every transaction of the merchant that no
 * payout settles yet marked as settled by it (the payout's reference, or the batch's id). The
 * statement's snapshot does not see the rows it inserts, so its own movements are never among them.
 */
export function payoutReservation(
  owner: PayoutOwner,
  payouts: readonly PayoutMoney[],
  settledBy: string | undefined,
  at: Date,
): NamedCtes {
  if (payouts.length > MAX_PAYOUTS_PER_STATEMENT) throw new Error('too many payouts for one statement');
  const entries = payouts.flatMap((payout) => reservationEntries(owner, payout, at));
  const { ctes } = transfers(entries);
  return (name) => {
    const settle = settledBy
      ? sql`${name('settled')} AS (
        UPDATE balance_transactions SET settled_by = ${settledBy}
        WHERE business_id = ${owner.businessId} AND environment = ${owner.environment}
          AND settled_by IS NULL AND source_kind <> 'payout' AND ${ownRows(owner)}
      )`
      : undefined;
    return sql.join([ctes?.(name), settle].filter((cte) => cte !== undefined));
  };
}

/** A failed or cancelled single payout settles nothing: the next payout takes its transactions. */
export async function releaseSettled(trx: Transaction<DB>, settledBy: string): Promise<void> {
  await sql`UPDATE balance_transactions SET settled_by = NULL WHERE settled_by = ${settledBy}`.execute(trx);
}

export interface ReservedPayout {
  environment: Environment;
  businessId: string;
  reference: string;
  amount: number;
  fee: number;
  /** The seller whose payout it is: its money returns to the seller's account. */
  sellerId?: string | null | undefined;
}

/**
 * The second step of a paid payout, as a transfer for the statement that marks it PAID: the
 * reserved amount to the destination wallet, the fee to the platform's revenue and its taxes.
 */
export function payoutPaid(
  payout: ReservedPayout,
  walletId: string,
  taxes: Pick<FeePlan, 'tofBps' | 'tteBps'>,
  at: Date,
): LedgerTransfer {
  const commission = payoutFeeCommission(payout.fee, taxes);
  return transfer({
    environment: payout.environment,
    kind: 'payout',
    reference: payout.reference,
    at,
    lines: [
      { account: PAYOUTS, amount: -(payout.amount + payout.fee) },
      { account: { kind: 'wallet', ownerId: walletId }, amount: payout.amount },
      { account: { kind: 'revenue' }, amount: commission.total_revenue },
      { account: { kind: 'tof' }, amount: commission.tof },
      { account: { kind: 'tte' }, amount: commission.tte },
    ],
  });
}

/**
 * The second step of a payout that failed or was cancelled, as a transfer for the statement
 * that records it: the reserved amount and fee back to the merchant (`payout_reversal`).
 */
export function payoutReturned(payout: ReservedPayout, why: 'failed' | 'cancelled', at: Date): LedgerTransfer {
  const total = payout.amount + payout.fee;
  return transfer({
    environment: payout.environment,
    businessId: payout.businessId,
    kind: 'payout',
    reference: payout.reference,
    at,
    balance: {
      type: 'payout_reversal',
      amount: total,
      source: { reference: payout.reference, kind: 'payout' },
      detail: { outcome: why },
    },
    lines: [
      { account: PAYOUTS, amount: -total },
      { account: payoutAccount({ businessId: payout.businessId, seller: payout.sellerId }), amount: total },
    ],
  });
}
