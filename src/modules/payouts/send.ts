import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { newId } from '../../lib/ids.js';
import { changeWithEvents } from '../events/outbox.js';
import { payoutFeePlan } from '../payments/fee-plans.js';
import { payoutPaid, payoutReturned, releaseSettled } from '../payments/payouts.js';
import { findWallet, hashPin, SANDBOX_WALLET_PIN, type WalletRow } from '../wallets/service.js';
import { payoutEvent } from './events.js';
import { PAYOUT_OPEN_STATUS, payoutSteps, type PayoutFailureCode } from './state.js';
import type { PayoutRow } from './views.js';

/**
 * decisions "Payouts": in the sandbox a payout to this phone always fails (WALLET_NOT_FOUND), as
 * a payment of the reserved amount does; any other E.164 phone without a wallet gets one.
 */
export const SANDBOX_FAILING_PAYOUT_PHONE = '+22220001313';

const FAILURE_TEXT: Record<PayoutFailureCode, string> = {
  WALLET_NOT_FOUND: 'No wallet has this phone number.',
  WALLET_LOCKED: 'The destination wallet is locked.',
};

/** One hash of the sandbox PIN per process: the wallets a sandbox payout opens share it. */
let sandboxPinHash: Promise<string> | undefined;

/**
 * The wallet a payout goes to, or why it cannot: a live payout needs an active wallet; in the
 * sandbox a phone without one gets a wallet (PIN 1234, empty), except the reserved failing phone.
 */
async function destinationOf(trx: Transaction<DB>, payout: PayoutRow): Promise<WalletRow | PayoutFailureCode> {
  const phone = payout.destination_phone;
  let wallet = await findWallet(trx, payout.environment, phone);
  if (!wallet && payout.environment === 'test' && phone !== SANDBOX_FAILING_PAYOUT_PHONE) {
    sandboxPinHash ??= hashPin(SANDBOX_WALLET_PIN);
    await trx
      .insertInto('wallets')
      .values({ id: newId('wal'), environment: 'test', phone, pin_hash: await sandboxPinHash, status: 'active' })
      .onConflict((conflict) => conflict.columns(['environment', 'phone']).doNothing())
      .execute();
    wallet = await findWallet(trx, payout.environment, phone);
  }
  if (!wallet) return 'WALLET_NOT_FOUND';
  if (wallet.status !== 'active') return 'WALLET_LOCKED';
  return wallet;
}

/**
 * Sends one PENDING payout, in one transaction: paid to its wallet (PAID, `payout.paid`) or, if
 * the wallet cannot take it, failed with its money back to the merchant (FAILED, `payout.failed`).
 * A payout another worker (or a cancel) holds is skipped. A crash before the commit leaves it
 * PENDING with its money reserved, to be sent again; after, it is done: never twice.
 */
async function sendPayout(db: Kysely<DB>, reference: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const payout = await trx
      .selectFrom('payouts')
      .selectAll()
      .where('reference', '=', reference)
      .where('status', '=', PAYOUT_OPEN_STATUS)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!payout) return false;
    const now = new Date();
    const destination = await destinationOf(trx, payout);
    const reserved = {
      environment: payout.environment,
      businessId: payout.business_id,
      reference,
      amount: payout.amount,
      fee: payout.fee,
    };
    const update = trx.updateTable('payouts').where('reference', '=', reference).returningAll();
    if (typeof destination === 'string') {
      const { to, event } = payoutSteps.fail;
      const failed = {
        status: to,
        failure_code: destination,
        failure_message: FAILURE_TEXT[destination],
        failed_at: now,
        updated_at: now,
      };
      await changeWithEvents(
        trx,
        update.set(failed),
        [payoutEvent(event, { ...payout, ...failed }, now)],
        payoutReturned(reserved, 'failed', now).ctes,
      );
      if (!payout.batch_id) await releaseSettled(trx, reference);
      return true;
    }
    const plan = await payoutFeePlan(trx, payout.business_id);
    const { to, event } = payoutSteps.pay;
    const paid = { status: to, wallet_id: destination.id, paid_at: now, updated_at: now };
    await changeWithEvents(
      trx,
      update.set(paid),
      [payoutEvent(event, { ...payout, ...paid }, now)],
      payoutPaid(reserved, destination.id, plan, now).ctes,
    );
    return true;
  });
}

/**
 * Worker task: sends the oldest PENDING payouts, each in its own transaction, up to `max` a run.
 * Several workers share the queue (each payout is taken under a skipping row lock).
 */
export async function sendDuePayouts(db: Kysely<DB>, max = 500): Promise<number> {
  const due = await db
    .selectFrom('payouts')
    .select('reference')
    .where('status', '=', PAYOUT_OPEN_STATUS)
    .orderBy('created_at')
    .orderBy('reference')
    .limit(max)
    .execute();
  let sent = 0;
  for (const { reference } of due) if (await sendPayout(db, reference)) sent++;
  return sent;
}
