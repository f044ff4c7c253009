import type { Environment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { post } from './ledger.js';

/**
 * Money entering a wallet from outside (a sandbox wallet's funds, an operator's top-up): from the
 * `funding` account, the only one allowed below zero, so the ledger still sums to zero.
 */
export async function fundWallet(
  trx: Executor,
  wallet: { id: string; environment: Environment },
  amount: number,
): Promise<void> {
  await post(trx, {
    environment: wallet.environment,
    kind: 'credit',
    reference: wallet.id,
    lines: [
      { account: { kind: 'funding' }, amount: -amount },
      { account: { kind: 'wallet', ownerId: wallet.id }, amount },
    ],
  });
}
