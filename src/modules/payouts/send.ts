import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { inTransaction, type Executor } from '../../db/transaction.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { feePlanFromColumns } from '../payments/fees.js';
import { payoutPaid, payoutReturned, releaseSettled } from '../payments/payouts.js';
import { openSandboxWallet, SANDBOX_FAILING_PAYOUT_PHONE } from '../sandbox/sandbox.js';
import { findWallet, type WalletRow } from '../wallets/service.js';
import { payoutEvent } from './events.js';
import { PAYOUT_FAILURE_CODES, payoutMachine, payoutSteps, type PayoutFailureCode } from './state.js';
import type { PayoutRow } from './views.js';

const FAILURE_TEXT: Record<PayoutFailureCode, string> = {
  WALLET_NOT_FOUND: 'No wallet has this phone number.',
  WALLET_LOCKED: 'The destination wallet is locked.',
};

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
  const opened = await openSandboxWallet(trx, payout.destination_phone, { balance: 0 });
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
      .where(payoutMachine.sqlFilter('pay', 'p.status'))
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
      sellerId: payout.seller_id,
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
      await unitOfWork()
        .money(payoutReturned(reserved, 'failed', now))
        .change(update.set(failed))
        .events([payoutEvent(event, { ...row, ...failed }, now)])
        .run(trx);
      if (!payout.batch_id) await releaseSettled(trx, reference);
      return true;
    }
    const defaults = feePlanFromColumns(undefined);
    const taxes = { tofBps: tof_bps ?? defaults.tofBps, tteBps: tte_bps ?? defaults.tteBps };
    const { to, event } = payoutSteps.pay;
    const paid = { status: to, wallet_id: destination, paid_at: now, updated_at: now };
    await unitOfWork()
      .money(payoutPaid(reserved, destination, taxes, now))
      .change(update.set(paid))
      .events([payoutEvent(event, { ...row, ...paid }, now)])
      .run(trx);
    return true;
  });
}

const isFailure = (destination: string): destination is PayoutFailureCode =>
  (PAYOUT_FAILURE_CODES as readonly string[]).includes(destination);

/**
 * Payouts sent at once, each in its own transaction. On PostgreSQL each on its own connection: a
 * payout waits mostly on round trips and its commit, so more at once send more a second. PGlite
 * gives its one session to transactions in turn: the sender's share of it grows with their number,
 * and 16 (a busy API's clients) keep up with payouts created at full speed, each request waiting
 * behind at most 16 short transactions.
 */
export const SENDERS: Record<Database['kind'], number> = { postgres: 8, pglite: 16 };
/**
 * How many due payouts a list holds, in turns: a payout created meanwhile waits for the list to be
 * sent (about 100 ms at 500 payouts/s), then goes in the next one's first turn.
 */
const LIST_SIZE = 48;

/**
 * The next list: the due payouts of every business and environment in turns, one payout of each
 * per turn (its oldest first), live before sandbox within a turn. The queues are found by a skip
 * scan of `payouts_pending_queue_idx` (one probe per queue, however many payouts each holds) and
 * each gives at most `LIST_SIZE` payouts, so a merchant with thousands pending costs a read what
 * a merchant with `LIST_SIZE` does.
 */
function nextList(db: Executor): Promise<{ reference: string }[]> {
  // Literals (sqlFilter's): a prepared statement's generic plan can use the partial index only when
  // its predicate is written in the text.
  const payable = payoutMachine.sqlFilter('pay');
  return sql<{ reference: string }>`
    WITH RECURSIVE queues AS (
      (SELECT business_id, environment FROM payouts WHERE ${payable}
       ORDER BY business_id, environment LIMIT 1)
      UNION ALL
      SELECT next.business_id, next.environment FROM queues q CROSS JOIN LATERAL (
        SELECT business_id, environment FROM payouts
        WHERE ${payable} AND (business_id, environment) > (q.business_id, q.environment)
        ORDER BY business_id, environment LIMIT 1
      ) next
    )
    SELECT due.reference FROM queues q CROSS JOIN LATERAL (
      SELECT reference, created_at, row_number() OVER (ORDER BY created_at, reference) AS turn
      FROM payouts
      WHERE ${payable} AND business_id = q.business_id AND environment = q.environment
      ORDER BY created_at, reference LIMIT ${LIST_SIZE}
    ) due
    ORDER BY due.turn, q.environment = 'test', due.created_at, due.reference
    LIMIT ${LIST_SIZE}`
    .execute(db)
    .then((result) => result.rows);
}

/**
 * Sends due payouts until none is left that this worker can take, `senders` at a time, each in
 * its own transaction under a skipping row lock: several workers share the queue and none sends a
 * payout twice. The senders take from one list, read by `nextList`; the one that finds it empty
 * reads the next while the others finish theirs (left out of it), so none waits for the slowest.
 * It ends at an empty list, or once as many payouts in a row as a list holds were held by others.
 */
export async function sendWhileDue(
  db: Kysely<DB>,
  options: { senders?: number; stopped?: () => boolean } = {},
): Promise<number> {
  const stopped = options.stopped ?? (() => false);
  let due: string[] = [];
  let next = 0;
  let sent = 0;
  let misses = 0;
  let done = false;
  const inFlight = new Set<string>();
  let reading: Promise<void> | undefined;
  const read = () =>
    (reading ??= (async () => {
      if (due.length > 0 && misses >= due.length) {
        done = true;
        return;
      }
      const rows = await nextList(db);
      due = rows.map((row) => row.reference).filter((reference) => !inFlight.has(reference));
      next = 0;
      if (due.length === 0) done = true;
    })().finally(() => (reading = undefined)));
  const sender = async () => {
    while (!done && !stopped()) {
      if (next >= due.length) {
        await read();
        continue;
      }
      const reference = due[next++]!;
      inFlight.add(reference);
      try {
        if (await sendPayout(db, reference)) {
          sent++;
          misses = 0;
        } else {
          misses++;
        }
      } catch (error) {
        done = true;
        throw error;
      } finally {
        inFlight.delete(reference);
      }
      // PGlite answers in the same thread without giving the event loop a turn: without this,
      // senders that always find work would keep requests (and their turn at the database) waiting.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const outcomes = await Promise.allSettled(Array.from({ length: options.senders ?? SENDERS.pglite }, sender));
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return sent;
}

/** Sends every due payout this worker can take (tests, and the loop below). */
export function sendDuePayouts(db: Kysely<DB>): Promise<number> {
  return sendWhileDue(db);
}

export interface PayoutSender {
  /** Ends the loop once its payouts in flight are sent. */
  stop(): Promise<void>;
}

/**
 * A worker's payout loop, beside its periodic tasks (which it never holds up): sends while
 * payouts are due, then looks again every `pollMs`. A payout is sent within about `pollMs` of its
 * commit when the queue is quiet, and within a list or two of any other merchant's flood.
 */
export function startPayoutSender(
  db: Kysely<DB>,
  logger: FastifyBaseLogger,
  options: { pollMs?: number; senders?: number } = {},
): PayoutSender {
  const pollMs = options.pollMs ?? 250;
  const senders = options.senders ?? SENDERS.pglite;
  let stopped = false;
  let wake: (() => void) | undefined;

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        await sendWhileDue(db, { senders, stopped: () => stopped });
      } catch (error) {
        logger.error({ err: error }, 'could not send payouts');
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }
  const running = loop();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await running;
    },
  };
}
