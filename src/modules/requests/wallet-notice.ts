import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';

/**
 * The channel an open wallet app listens on (src/modules/walletapp/stream-hub.ts). A new request
 * notifies it in its own transaction, so the notice goes out at the commit (never for a request
 * rolled back), to every process listening on the database; the payload is the payer's wallet id,
 * so a process wakes only that wallet's streams.
 */
export const WALLET_REQUEST_CHANNEL = 'wallet_request';

export async function notifyWallet(executor: Executor, walletId: string): Promise<void> {
  await sql`SELECT pg_notify(${WALLET_REQUEST_CHANNEL}, ${walletId})`.execute(executor);
}
