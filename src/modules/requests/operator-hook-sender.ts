import { sql, type Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { DB } from '../../db/schema.js';
import { MAX_ATTEMPTS, retryDelaySeconds } from '../webhooks/delivery/retry-schedule.js';
import { postWebhook, type PostOutcome } from '../webhooks/sender.js';
import {
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  standardSignatureHeader,
} from '../webhooks/signing.js';

/**
 * The worker's side of the operator notification hook (decision 078): a leased periodic task that
 * sends the queued notices with the webhooks' own pieces (the guarded POST of sender.ts, the
 * Standard Webhooks signature, the delivery engine's retry schedule), not a second engine.
 */

/**
 * An attempt's time limit. Shorter than a merchant webhook's 30 s: a gateway that accepts a
 * message to send later answers in far less, and a request lives at most 15 minutes.
 */
export const OPERATOR_HOOK_TIMEOUT_MS = 5000;
const CONNECT_TIMEOUT_MS = 2000;
/** A claim lasts longer than any attempt: a notice whose worker died mid-attempt is due again then. */
const CLAIM_SECONDS = 60;
const BATCH = 20;
/** A run stops claiming after this long, so a backlog is sent over several ticks. */
const RUN_BUDGET_MS = 1000;
const ERROR_CHARS = 500;

export interface NoticeRun {
  sent: number;
  retrying: number;
  failed: number;
  expired: number;
}

interface ClaimedNotice {
  id: string;
  body: string;
  attempts: number;
}

/**
 * Sends the notices that are due, a bounded batch at a time, each batch's attempts side by side.
 * Nothing when the hook is off (the notices queued while it was on wait for it to be on again).
 * Notices whose request ended or whose time is up are dropped (EXPIRED) first: a payer told of a
 * request they can no longer answer is only misled.
 */
export async function sendOperatorNotices(db: Kysely<DB>, config: Config): Promise<NoticeRun> {
  const run: NoticeRun = { sent: 0, retrying: 0, failed: 0, expired: 0 };
  const hook = config.operatorHook;
  if (!hook) return run;
  const post = {
    timeoutMs: Math.min(config.webhookTimeoutMs, OPERATOR_HOOK_TIMEOUT_MS),
    connectTimeoutMs: Math.min(config.webhookConnectTimeoutMs, CONNECT_TIMEOUT_MS),
    // The URL is the operator's own setting, not a merchant's: the switch applies to both
    // environments' notices (decision 078).
    allowPrivate: config.webhookAllowPrivate,
  };
  const started = Date.now();
  let claimed: ClaimedNotice[];
  do {
    const now = new Date();
    run.expired += await dropUseless(db, now);
    claimed = await claimNotices(db, now);
    const outcomes = await Promise.all(
      claimed.map(async (notice) => ({ notice, result: await sendNotice(hook, notice, post) })),
    );
    for (const { notice, result } of outcomes) {
      const at = new Date();
      if (result.error === null) {
        await sql`UPDATE operator_notices SET status = 'SENT', sent_at = ${at}::timestamptz,
            last_status_code = ${result.statusCode}, last_error = NULL, updated_at = ${at}::timestamptz
          WHERE id = ${notice.id} AND status = 'PENDING'`.execute(db);
        run.sent++;
        continue;
      }
      const error = `${result.errorClass ?? 'ERROR'}: ${result.error}`.slice(0, ERROR_CHARS);
      const last = notice.attempts >= MAX_ATTEMPTS;
      const next = new Date(at.getTime() + retryDelaySeconds(notice.attempts, config.webhookRetryScale) * 1000);
      await sql`UPDATE operator_notices SET status = ${last ? 'FAILED' : 'PENDING'},
          next_attempt_at = ${next}::timestamptz, last_status_code = ${result.statusCode}::int,
          last_error = ${error}, updated_at = ${at}::timestamptz
        WHERE id = ${notice.id} AND status = 'PENDING'`.execute(db);
      if (last) run.failed++;
      else run.retrying++;
    }
  } while (claimed.length === BATCH && Date.now() - started < RUN_BUDGET_MS);
  return run;
}

/** Due notices whose request is no longer pending, or whose time is up: EXPIRED, never sent. */
async function dropUseless(db: Kysely<DB>, now: Date): Promise<number> {
  const result = await sql`UPDATE operator_notices n SET status = 'EXPIRED', updated_at = ${now}::timestamptz
    FROM payment_requests r
    WHERE r.id = n.request_id AND n.status = 'PENDING' AND n.next_attempt_at <= ${now}::timestamptz
      AND (r.status <> 'PENDING' OR r.expires_at <= ${now}::timestamptz)`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/**
 * Takes a batch of due notices, soonest first: the attempt is counted and the notice pushed past
 * the claim's end in the same statement, so another run (a lease that lapsed) skips it. SKIP
 * LOCKED leaves rows another worker is claiming to it.
 */
async function claimNotices(db: Kysely<DB>, now: Date): Promise<ClaimedNotice[]> {
  const result = await sql<ClaimedNotice>`UPDATE operator_notices n SET attempts = n.attempts + 1,
      next_attempt_at = ${new Date(now.getTime() + CLAIM_SECONDS * 1000)}::timestamptz, updated_at = ${now}::timestamptz
    WHERE n.id IN (SELECT id FROM operator_notices WHERE status = 'PENDING' AND next_attempt_at <= ${now}::timestamptz
      ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
    RETURNING n.id, n.body, n.attempts`.execute(db);
  return result.rows;
}

/** One attempt, signed with the operator's secret; the receiver's failures come back, never a throw. */
function sendNotice(
  hook: { url: string; secret: string },
  notice: ClaimedNotice,
  options: { timeoutMs: number; connectTimeoutMs: number; allowPrivate: boolean },
): Promise<PostOutcome> {
  const timestamp = Math.floor(Date.now() / 1000);
  return postWebhook(
    hook.url,
    notice.body,
    {
      'Content-Type': 'application/json',
      'User-Agent': 'Commerce-Webhooks/1',
      // The notice's id, the same on every attempt: what receivers deduplicate on.
      [STANDARD_ID_HEADER]: notice.id,
      [STANDARD_TIMESTAMP_HEADER]: String(timestamp),
      [STANDARD_SIGNATURE_HEADER]: standardSignatureHeader([hook.secret], notice.id, timestamp, notice.body),
    },
    options,
  );
}
