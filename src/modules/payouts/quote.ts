import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Caller } from '../../http/context.js';
import { payoutFeePlan } from '../payments/fee-plans.js';
import { payoutFee } from '../payments/fees.js';
import { accountBalance } from '../payments/ledger.js';

/** What some payouts would take from the merchant's balance: their amounts, fees, and the balance left. */
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

/**
 * The fees of these amounts on the business's plan (the same plan and fee the payout's creation
 * charges) and the balance they would leave, read without a lock: a preview. The write reserves
 * under the lock and refuses if the balance moved meanwhile.
 */
export async function payoutQuote(db: Kysely<DB>, caller: Caller, amounts: readonly number[]): Promise<PayoutQuote> {
  const [plan, available] = await Promise.all([
    payoutFeePlan(db, caller.businessId),
    accountBalance(db, caller.environment, { kind: 'merchant', ownerId: caller.businessId }),
  ]);
  const amount = amounts.reduce((total, each) => total + each, 0);
  const fee = amounts.reduce((total, each) => total + payoutFee(each, plan), 0);
  return { count: amounts.length, amount, fee, total: amount + fee, available, after: available - amount - fee };
}
