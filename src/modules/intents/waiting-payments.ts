import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { duePayments } from '../payments/store.js';
import { SANDBOX_ANSWERING_PHONES, sandboxAnswerOf } from '../sandbox/sandbox.js';
import { endWaitingPayment, type WaitingAnswer } from './payments.js';

/**
 * Worker task: ends the intents' payments that wait for their payer (PROCESSING) once their answer
 * is due: a sandbox phone that approves or declines after its delay (sandbox.ts), and any payment
 * still waiting after `timeoutSeconds` (`PAYMENT_PROCESSING_TIMEOUT_SECONDS`), so a payer who never
 * answers, or a worker that died between the attempt and its end, leaves nothing waiting. Each
 * ends in a transaction of its own (`endWaitingPayment`). A payment request's payment ends with
 * its request (requests/expiry.ts), at the request's own expiry.
 */
export async function endWaitingPayments(
  db: Kysely<DB>,
  options: { timeoutSeconds: number; now?: Date; batchSize?: number },
): Promise<number> {
  const now = options.now ?? new Date();
  const timedOut = new Date(now.getTime() - options.timeoutSeconds * 1000);
  const answered = Object.entries(SANDBOX_ANSWERING_PHONES).flatMap(([phone, { afterSeconds }]) =>
    afterSeconds === null
      ? []
      : [sql`(payer_phone = ${phone} AND created_at <= ${new Date(now.getTime() - afterSeconds * 1000)})`],
  );
  const due = sql<boolean>`intent_id IS NOT NULL AND method <> 'WALLET_REQUEST' AND (created_at <= ${timedOut}
    ${answered.length > 0 ? sql`OR (method = 'SANDBOX' AND (${sql.join(answered, sql` OR `)}))` : sql``})`;
  let ended = 0;
  const failed: string[] = [];
  for (const payment of await duePayments(db, due, options.batchSize ?? 100)) {
    if (payment.intent_id === null || payment.payer_phone === null) continue;
    const waiting = { id: payment.id, intentId: payment.intent_id, phone: payment.payer_phone };
    const answer = answerOf(payment, timedOut);
    // One payment that cannot end does not hold up the others: the run ends them, then fails naming it.
    try {
      if (await db.transaction().execute((trx) => endWaitingPayment(trx, waiting, answer, now))) ended++;
    } catch (error) {
      failed.push(`${payment.id} (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  if (failed.length > 0) {
    throw new Error(
      `waiting payments: ended ${ended}; could not end ${failed.length}: ${failed.slice(0, 5).join(', ')}`,
    );
  }
  return ended;
}

function answerOf(
  payment: { method: string; payer_phone: string | null; created_at: Date },
  timedOut: Date,
): WaitingAnswer {
  if (payment.method === 'SANDBOX' && payment.payer_phone !== null && payment.created_at > timedOut) {
    const { answer } = sandboxAnswerOf(payment.payer_phone);
    if (answer === 'APPROVES') return 'APPROVED';
    if (answer === 'DECLINES') return 'DECLINED';
  }
  return 'TIMED_OUT';
}
