import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { newId } from '../../lib/ids.js';
import { changeWithEvents } from '../events/outbox.js';
import { feePlanFromColumns } from '../payments/fees.js';
import { payoutPaid, payoutReturned, releaseSettled } from '../payments/payouts.js';
import { findWallet, hashPin, SANDBOX_WALLET_PIN, type WalletRow } from '../wallets/service.js';
import { payoutEvent } from './events.js';
import { PAYOUT_FAILURE_CODES, PAYOUT_OPEN_STATUS, payoutSteps, type PayoutFailureCode } from './state.js';
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

/** A PENDING payout locked for sending, with its destination wallet (if any) and its fee's taxes. */
type PayoutToSend = PayoutRow & {
  destination_wallet_id: string | null;
  destination_wallet_status: WalletRow['status'] | null;
  tof_bps: number | null;
  tte_bps: number | null;
};

/**
 * The wallet a payout goes to, or why it cannot: a live payout needs an active wallet; in the
 * sandbox a phone without one gets a wallet (PIN 1234, empty), except the reserved failing phone.
 */
async function destinationOf(trx: Transaction<DB>, payout: PayoutToSend): Promise<string | PayoutFailureCode> {
  if (payout.destination_wallet_id) {
    return payout.destination_wallet_status === 'active' ? payout.destination_wallet_id : 'WALLET_LOCKED';
  }
  if (payout.environment !== 'test' || payout.destination_phone === SANDBOX_FAILING_PAYOUT_PHONE) {
    return 'WALLET_NOT_FOUND';
  }
  sandboxPinHash ??= hashPin(SANDBOX_WALLET_PIN);
  const opened = await trx
    .insertInto('wallets')
    .values({
      id: newId('wal'),
      environment: 'test',
      phone: payout.destination_phone,
      pin_hash: await sandboxPinHash,
      status: 'active',
    })
    .onConflict((conflict) => conflict.columns(['environment', 'phone']).doNothing())
    .returning('id')
    .executeTakeFirst();
  // Opened meanwhile by another transaction (a payment's sandbox payer): that one.
  const wallet = opened ?? (await findWallet(trx, 'test', payout.destination_phone));
  return wallet ? wallet.id : 'WALLET_NOT_FOUND';
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
      .selectFrom('payouts as p')
      .leftJoin('wallets as w', (join) =>
        join.onRef('w.environment', '=', 'p.environment').onRef('w.phone', '=', 'p.destination_phone'),
      )
      .leftJoin('fee_plans as f', 'f.business_id', 'p.business_id')
      .selectAll('p')
      .select(['w.id as destination_wallet_id', 'w.status as destination_wallet_status', 'f.tof_bps', 'f.tte_bps'])
      .where('p.reference', '=', reference)
      .where('p.status', '=', PAYOUT_OPEN_STATUS)
      .forUpdate('p')
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
    const { destination_wallet_id: _, destination_wallet_status: __, tof_bps, tte_bps, ...row } = payout;
    const update = trx.updateTable('payouts').where('reference', '=', reference).returningAll();
    if (isFailure(destination)) {
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
        [payoutEvent(event, { ...row, ...failed }, now)],
        payoutReturned(reserved, 'failed', now).ctes,
      );
      if (!payout.batch_id) await releaseSettled(trx, reference);
      return true;
    }
    const defaults = feePlanFromColumns(undefined);
    const taxes = { tofBps: tof_bps ?? defaults.tofBps, tteBps: tte_bps ?? defaults.tteBps };
    const { to, event } = payoutSteps.pay;
    const paid = { status: to, wallet_id: destination, paid_at: now, updated_at: now };
    await changeWithEvents(
      trx,
      update.set(paid),
      [payoutEvent(event, { ...row, ...paid }, now)],
      payoutPaid(reserved, destination, taxes, now).ctes,
    );
    return true;
  });
}

const isFailure = (destination: string): destination is PayoutFailureCode =>
  (PAYOUT_FAILURE_CODES as readonly string[]).includes(destination);

/** Payouts sent at once, each in its own transaction on its own connection. */
const SENDERS = 4;
/** How many due payouts a pass reads; a run passes again while it finds that many. */
const PASS = 500;

/**
 * Worker task: sends the oldest PENDING payouts, each in its own transaction, `SENDERS` at a
 * time, pass after pass until the queue is empty or `budgetMs` has gone (then the next run goes
 * on). Sending one at a time, 500 a run, fell behind payouts created at 200 a second
 * (docs/benchmarks.md). Several workers share the queue: each payout is taken under a skipping
 * row lock.
 */
export async function sendDuePayouts(db: Kysely<DB>, budgetMs = 10_000): Promise<number> {
  const deadline = Date.now() + budgetMs;
  let sent = 0;
  for (;;) {
    const due = await db
      .selectFrom('payouts')
      .select('reference')
      .where('status', '=', PAYOUT_OPEN_STATUS)
      .orderBy('created_at')
      .orderBy('reference')
      .limit(PASS)
      .execute();
    let next = 0;
    let sentNow = 0;
    const sender = async () => {
      while (next < due.length && Date.now() < deadline) {
        const { reference } = due[next++]!;
        if (await sendPayout(db, reference)) sentNow++;
      }
    };
    await Promise.all(Array.from({ length: SENDERS }, sender));
    sent += sentNow;
    // A short pass emptied the queue; a pass that sent nothing found only payouts others hold.
    if (due.length < PASS || sentNow === 0 || Date.now() >= deadline) return sent;
  }
}
