import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { SANDBOX_REQUEST_PHONES } from '../sandbox/sandbox.js';
import type { WaitingAnswer } from '../intents/payments.js';
import { endPending } from './service.js';
import { dueRequests, type RequestRow } from './store.js';

/**
 * Worker task (leased, every second): ends the pending requests whose answer is due: those whose
 * time is up (EXPIRED), and in the sandbox those whose phone answers by itself after its delay
 * (SANDBOX_REQUEST_PHONES). Each ends in a transaction of its own; one that cannot end does not
 * hold up the others.
 */
export async function endDueRequests(
  db: Kysely<DB>,
  options: { now?: Date; batchSize?: number } = {},
): Promise<number> {
  const now = options.now ?? new Date();
  const answering = Object.entries(SANDBOX_REQUEST_PHONES).flatMap(([phone, { afterSeconds }]) =>
    afterSeconds === null
      ? []
      : [sql`(r.phone = ${phone} AND r.created_at <= ${new Date(now.getTime() - afterSeconds * 1000)}::timestamptz)`],
  );
  const due = sql<boolean>`(r.expires_at <= ${now}::timestamptz
    OR (r.environment = 'test' AND (${sql.join(answering, sql` OR `)})))`;
  let ended = 0;
  const failed: string[] = [];
  for (const request of await dueRequests(db, due, options.batchSize ?? 100)) {
    try {
      const answer = answerOf(request, now);
      if (await db.transaction().execute((trx) => endPending(trx, request, answer, now))) ended++;
    } catch (error) {
      failed.push(`${request.id} (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  if (failed.length > 0) {
    throw new Error(
      `payment requests: ended ${ended}; could not end ${failed.length}: ${failed.slice(0, 5).join(', ')}`,
    );
  }
  return ended;
}

function answerOf(request: RequestRow, now: Date): WaitingAnswer {
  if (request.expires_at <= now) return 'TIMED_OUT';
  const scenario = (SANDBOX_REQUEST_PHONES as Record<string, { answer: string }>)[request.phone];
  if (scenario?.answer === 'APPROVES') return 'APPROVED';
  if (scenario?.answer === 'DECLINES') return 'DECLINED';
  return 'TIMED_OUT';
}
