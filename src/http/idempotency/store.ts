import { sql, type Kysely, type Transaction } from 'kysely';
import { deleteInBatches, type BatchBudget, type BatchedDeleteResult } from '../../db/batched-delete.js';
import type { DB, Environment } from '../../db/schema.js';
import { ApiError } from '../errors.js';

/**
 * The idempotency keys' SQL: the claim that opens a write's transaction, the insert of the key
 * with its answer that closes it, and the cleanup. Nothing here knows about HTTP.
 */

export const RETENTION_HOURS = 24;

/** The idempotency scope and identity of one write request. */
export interface KeyIdentity {
  businessId: string;
  environment: Environment;
  key: string;
  fingerprint: string;
}

/** An answer as stored under a key and sent again on a replay: its status and serialized body. */
export interface StoredAnswer {
  status: number;
  body: string;
}

export type Claim = { kind: 'claimed' } | ({ kind: 'replay' } & StoredAnswer) | { kind: 'retry' };

interface KeyRow {
  held: boolean;
  existing_id: number | null;
  fingerprint: string | null;
  response_status: number | null;
  response_body: string | null;
  expired: boolean | null;
}

const lockId = (identity: KeyIdentity) => `${identity.businessId}:${identity.environment}:${identity.key}`;

/**
 * The write's first statement: takes a transaction-scoped advisory lock on the key (so a second
 * request with the same key never waits on the first: it is told IN_PROGRESS) and reads the key's
 * committed row, if any, with a snapshot taken after the lock (migration 021 says why that takes a
 * function). Lock ids are 64-bit hashes of the scope and key. Says how to go on: the key is this
 * transaction's, or its stored answer is replayed, or (an expired key was deleted) try again;
 * refuses with 422 or 409.
 */
export async function claimKey(trx: Transaction<DB>, identity: KeyIdentity): Promise<Claim> {
  const { rows } = await sql<KeyRow>`
    SELECT held, existing_id, fingerprint, response_status, response_body, expired
    FROM idempotency_claim(${lockId(identity)}, ${identity.businessId}, ${identity.environment}, ${identity.key},
      ${RETENTION_HOURS}::int)`.execute(trx);
  const row = rows[0]!;
  if (!row.held) throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS');
  if (row.existing_id === null) return { kind: 'claimed' };
  if (row.expired) {
    await trx.deleteFrom('idempotency_keys').where('id', '=', Number(row.existing_id)).execute();
    return { kind: 'retry' };
  }
  if (row.fingerprint !== identity.fingerprint) throw new ApiError('IDEMPOTENCY_KEY_REUSED');
  if (row.response_status === null || row.response_body === null) {
    // Only a process of an earlier version leaves a committed claim without its answer.
    throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS');
  }
  return { kind: 'replay', status: row.response_status, body: row.response_body };
}

/**
 * The key and its answer, inserted as the transaction's last write. Should another writer have
 * committed the key meanwhile without its lock, this insert fails on the unique key (`isKeyTaken`):
 * the whole transaction rolls back, and the next attempt replays that answer.
 */
export async function storeAnswer(trx: Transaction<DB>, identity: KeyIdentity, answer: StoredAnswer): Promise<void> {
  await sql`INSERT INTO idempotency_keys (business_id, environment, idempotency_key, fingerprint, state,
      response_status, response_body)
    VALUES (${identity.businessId}, ${identity.environment}, ${identity.key}, ${identity.fingerprint}, ${'done'},
      ${answer.status}::int, ${answer.body}::text)`.execute(trx);
}

/** The error of a key another request committed first (see `storeAnswer`). */
export function isKeyTaken(error: unknown): boolean {
  const { code, constraint, message } = error as { code?: string; constraint?: string; message?: string };
  const name = 'idempotency_keys_business_id_environment_idempotency_key_key';
  return code === '23505' && (constraint === name || (message ?? '').includes(name));
}

/**
 * Worker task: forget keys older than the retention period, oldest first, in bounded batches
 * (a day of traffic is millions of keys: one DELETE would hold them all in one transaction).
 */
export function deleteExpiredIdempotencyKeys(db: Kysely<DB>, budget: BatchBudget): Promise<BatchedDeleteResult> {
  return deleteInBatches(db, budget, async (trx, limit) => {
    const result = await sql`DELETE FROM idempotency_keys WHERE id IN (
        SELECT id FROM idempotency_keys WHERE created_at < now() - make_interval(hours => ${RETENTION_HOURS})
        ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`.execute(trx);
    return Number(result.numAffectedRows ?? 0n);
  });
}
