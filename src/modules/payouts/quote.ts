import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Caller } from '../../http/context.js';
import { payoutFeePlan } from '../payments/fee-plans.js';
import { payoutFee } from '../payments/fees.js';
import { accountBalance } from '../payments/ledger.js';

/** What some payouts would take from the merchant's (or a seller's) balance: their amounts, fees, and the balance left. */
export interface PayoutQuote {
  count: number;
  amount: number;
  fee: number;
  /** Amounts and fees: what the payouts reserve. */
  total: number;
  available: number;
  /** The balance once they are reserved (negative: the write would refuse with INSUFFICIENT_FUNDS). */
  after: number;
}

/** The fee of each payout of these amounts on the business's plan: what a payout's creation charges and its preview shows. */
export async function payoutFees(db: Kysely<DB>, businessId: string, amounts: readonly number[]): Promise<number[]> {
  const plan = await payoutFeePlan(db, businessId);
  return amounts.map((amount) => payoutFee(amount, plan));
}

/**
 * The fees of these amounts and the balance they would leave, read without a lock: a preview.
 * The write reserves under the lock and refuses if the balance moved meanwhile. With `seller` (its
 * id, already found the caller's), the balance is that seller's, as its payout would take from it
 * (decision 082); the fee is the business's plan either way.
 */
export async function payoutQuote(
  db: Kysely<DB>,
  caller: Caller,
  amounts: readonly number[],
  seller?: string,
): Promise<PayoutQuote> {
  const account = seller
    ? ({ kind: 'seller', ownerId: seller } as const)
    : ({ kind: 'merchant', ownerId: caller.businessId } as const);
  const [fees, available] = await Promise.all([
    payoutFees(db, caller.businessId, amounts),
    accountBalance(db, caller.environment, account),
  ]);
  const amount = amounts.reduce((total, each) => total + each, 0);
  const fee = fees.reduce((total, each) => total + each, 0);
  return { count: amounts.length, amount, fee, total: amount + fee, available, after: available - amount - fee };
}
