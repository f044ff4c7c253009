import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { chargeWallet, failed, type PaymentAttempt, type PaymentMethod } from '../payments/methods.js';
import { walletRefund } from '../payments/wallet-payments.js';
import { lockedUntil } from '../wallets/service.js';
import { sandboxAnswerOf, sandboxPayer } from './sandbox.js';

/**
 * The sandbox's simulation (a test key's `simulate`): the payer's phone says what its wallet does
 * (the scenario table of sandbox.ts), a phone without a wallet gets a funded one, and
 * `outcome: 'failure'` fails without touching a wallet.
 */
export function sandboxMethod(outcome: 'success' | 'failure' = 'success'): PaymentMethod {
  const chargeSandboxWallet = async (trx: Transaction<DB>, attempt: PaymentAttempt) => {
    const payer = attempt.payer ?? (await sandboxPayer(trx, attempt.phone));
    if (lockedUntil(payer.wallet, attempt.now)) return failed('WALLET_LOCKED', attempt.amount);
    return chargeWallet(attempt, payer);
  };
  return {
    name: 'SANDBOX',
    async authorize(trx, attempt) {
      if (outcome === 'failure') return failed('SIMULATED_FAILURE', attempt.amount);
      if (sandboxAnswerOf(attempt.phone).answer !== 'PAYS') return { status: 'PROCESSING' };
      return chargeSandboxWallet(trx, attempt);
    },
    approve: chargeSandboxWallet,
    refund: (trx, refund) => walletRefund(trx, refund),
  };
}
