import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, Environment } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { errorBody, sendError } from './error-handler.js';
import { ApiError } from './errors.js';

/**
 * The one write path. Every write route answers through `respondInTransaction`: one database
 * transaction that claims the request's idempotency key, runs the handler, and stores the
 * response, so the effect and its stored answer commit together or not at all. A request that
 * dies mid-way leaves nothing behind, and a retry with the same key executes it then.
 *
 * Two modes only: the key is claimed before the handler (every JSON route), or, for uploads,
 * after the route has read the body and can fingerprint the file (`fingerprintOf` is given).
 * An error answer below 500 is stored by the error handler (`storeErrorAnswer`) in one statement.
 */

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;
export const RETENTION_HOURS = 24;

export function isWriteRequest(request: FastifyRequest): boolean {
  return WRITE_METHODS.has(request.method) && (request.routeOptions.config.auth ?? 'none') !== 'none';
}

/**
 * Runs after authentication: every Developer API write must carry a well-formed key. The operator
 * API takes one when it is given one (a script crediting wallets should send it; a person at the
 * CLI need not), and checks its form like any other.
 */
export function requireIdempotencyKey(request: FastifyRequest): void {
  if (!isWriteRequest(request)) return;
  const key = request.headers['x-idempotency-key'];
  if (key === undefined || key === '') {
    if (request.routeOptions.config.auth === 'admin') return;
    throw new ApiError('IDEMPOTENCY_KEY_REQUIRED');
  }
  checkKeyFormat(key);
}

/**
 * The scope of the operator API's keys: no business owns them. Business ids are `biz_…`, so this
 * scope never meets a business's keys; the environment column means nothing for it.
 */
const OPERATOR_SCOPE = { businessId: 'operator', environment: 'live' } as const;

export function checkKeyFormat(key: string | string[]): asserts key is string {
  if (typeof key !== 'string' || !KEY_FORMAT.test(key)) {
    throw new ApiError('VALIDATION_ERROR', 'X-Idempotency-Key must be 1 to 255 printable ASCII characters.', [
      { field: 'header.x-idempotency-key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
  }
}

/**
 * The idempotency identity of a customer's write (no API key: the hosted pages and their JSON
 * API), when it carries an `X-Idempotency-Key`: scoped to the business and environment it writes
 * to and to the customer (`who`, e.g. the wallet phone), so one customer's key never answers
 * another's request. Optional: a customer write without a key simply runs. `request` is what the
 * key covers: the body without its secrets (a PIN must not be kept, even hashed, beside the key).
 */
export function customerIdempotency(
  request: FastifyRequest,
  scope: { businessId: string; environment: Environment; who: string },
  covered: unknown,
): IdempotencyRequest | undefined {
  const key = request.headers['x-idempotency-key'];
  if (key === undefined || key === '') return undefined;
  checkKeyFormat(key);
  return {
    businessId: scope.businessId,
    environment: scope.environment,
    key: `customer:${scope.who}:${key}`,
    fingerprint: requestFingerprint(request, covered),
  };
}

export function canonicalJson(value: unknown): string {
  // The same text as the recursive definition (sorted keys, undefined properties left out), built
  // with an explicit stack: a body nested 20,000 deep must not overflow the call stack.
  const out: string[] = [];
  const stack: ({ value: unknown } | string)[] = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const current = item.value;
    if (Array.isArray(current)) {
      stack.push(']');
      for (let i = current.length - 1; i >= 0; i--) {
        stack.push({ value: current[i] });
        if (i > 0) stack.push(',');
      }
      stack.push('[');
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      stack.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        stack.push({ value: v });
        stack.push(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`);
      }
      stack.push('{');
    } else {
      out.push(JSON.stringify(current) ?? 'null');
    }
  }
  return out.join('');
}

/** What makes two requests "the same": method, path with query, and the body (or file bytes). */
export function requestFingerprint(request: FastifyRequest, body: unknown | Buffer): string {
  const hash = createHash('sha256').update(`${request.method} ${request.url}\n`);
  hash.update(Buffer.isBuffer(body) ? body : canonicalJson(body ?? null));
  return hash.digest('hex');
}

/** The idempotency scope and identity of one write request. */
export interface IdempotencyRequest {
  businessId: string;
  environment: Environment;
  key: string;
  fingerprint: string;
}

type ClaimResult = { kind: 'claimed' } | { kind: 'replay'; status: number; body: string } | { kind: 'retry' };

interface KeyRow {
  held: boolean;
  existing_id: number | null;
  fingerprint: string | null;
  response_status: number | null;
  response_body: string | null;
  expired: boolean | null;
}

interface ClaimRow extends KeyRow {
  claimed_id: number | null;
}

const lockId = (request: IdempotencyRequest) => `${request.businessId}:${request.environment}:${request.key}`;

/**
 * One statement: take a transaction-scoped advisory lock on the key (so a second request with the
 * same key never waits on the first: it is told IN_PROGRESS) and then read the key's committed
 * row, if any, with a snapshot taken after the lock (migration 021 says why that takes a
 * function). The write's transaction inserts the key with its answer at the end (`storeAnswer`).
 * Lock ids are 64-bit hashes of the scope and key. It is the write's first statement.
 */
async function lockKey(executor: Executor, request: IdempotencyRequest): Promise<KeyRow> {
  const result = await sql<KeyRow>`
    SELECT held, existing_id, fingerprint, response_status, response_body, expired
    FROM idempotency_claim(${lockId(request)}, ${request.businessId}, ${request.environment}, ${request.key},
      ${RETENTION_HOURS}::int)`.execute(executor);
  return result.rows[0]!;
}

/**
 * The key and its answer, inserted as the transaction's last write. Should
 * another writer have committed the key meanwhile without its lock, this insert fails on the
 * unique key: the whole transaction rolls back, and the next attempt replays that answer.
 */
async function storeAnswer(
  trx: Transaction<DB>,
  request: IdempotencyRequest,
  stored: { status: number; body: string },
): Promise<void> {
  await sql`INSERT INTO idempotency_keys (business_id, environment, idempotency_key, fingerprint, state,
      response_status, response_body)
    VALUES (${request.businessId}, ${request.environment}, ${request.key}, ${request.fingerprint}, ${'done'},
      ${stored.status}::int, ${stored.body}::text)`.execute(trx);
}

/** The error of a key another request committed first (see `storeAnswer`). */
function isKeyTaken(error: unknown): boolean {
  const { code, constraint, message } = error as { code?: string; constraint?: string; message?: string };
  const name = 'idempotency_keys_business_id_environment_idempotency_key_key';
  return code === '23505' && (constraint === name || (message ?? '').includes(name));
}

/**
 * An error answer stored on its own, outside the failed write's transaction: one statement takes
 * the key's lock, inserts the key with the answer, and reads the key's committed row when another
 * request already has it.
 */
async function claimStatement(
  executor: Executor,
  request: IdempotencyRequest,
  response: { status: number; body: string },
): Promise<ClaimRow> {
  const result = await sql<ClaimRow>`
    WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended(${lockId(request)}, 0)) AS held),
    claimed AS (
      INSERT INTO idempotency_keys (business_id, environment, idempotency_key, fingerprint, state,
        response_status, response_body)
      SELECT ${request.businessId}, ${request.environment}, ${request.key}, ${request.fingerprint},
        ${'done'}, ${response.status}::int, ${response.body}::text
      FROM lock WHERE held
      ON CONFLICT (business_id, environment, idempotency_key) DO NOTHING
      RETURNING id
    )
    SELECT (SELECT held FROM lock) AS held, (SELECT id FROM claimed) AS claimed_id, k.id AS existing_id,
      k.fingerprint, k.response_status, k.response_body,
      k.created_at < now() - make_interval(hours => ${RETENTION_HOURS}) AS expired
    FROM (SELECT 1) AS one
    LEFT JOIN idempotency_keys k
      ON k.business_id = ${request.businessId} AND k.environment = ${request.environment}
      AND k.idempotency_key = ${request.key}`.execute(executor);
  return result.rows[0]!;
}

/**
 * Claims the key or says how to answer for it: the stored response, 422, or 409. Without a
 * `response`, the claim is the key's lock for the caller's transaction, which stores the answer at
 * its end; with one, it is stored now.
 */
async function claimKey(
  executor: Executor,
  request: IdempotencyRequest,
  response?: { status: number; body: string },
): Promise<ClaimResult> {
  const row = response ? await claimStatement(executor, request, response) : await lockKey(executor, request);
  if (!row.held) throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS');
  if (row.existing_id === null) {
    if (!response || (row as ClaimRow).claimed_id !== null) return { kind: 'claimed' };
    return { kind: 'retry' }; // committed after this statement's snapshot
  }
  if (row.expired) {
    await executor.deleteFrom('idempotency_keys').where('id', '=', Number(row.existing_id)).execute();
    return { kind: 'retry' };
  }
  if (row.fingerprint !== request.fingerprint) throw new ApiError('IDEMPOTENCY_KEY_REUSED');
  if (row.response_status === null || row.response_body === null) {
    // Only a process of an earlier version leaves a committed claim without its answer.
    throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS');
  }
  return { kind: 'replay', status: row.response_status, body: row.response_body };
}

function sendStored(reply: FastifyReply, stored: { status: number; body: string }, replayed: boolean) {
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.code(stored.status).type('application/json; charset=utf-8').send(stored.body);
}

/** The body a key covers: without the route's `secretFields`. */
function withoutSecrets(request: FastifyRequest): unknown {
  const fields = request.routeOptions.config.secretFields;
  const body = request.body;
  if (!fields || body === null || typeof body !== 'object') return body;
  return Object.fromEntries(Object.entries(body).filter(([name]) => !fields.includes(name)));
}

/**
 * The idempotency identity of a write request: scoped to the API key's business and environment,
 * or to the operator. Undefined when it has none (no API key, or an operator write without a key).
 */
export function idempotencyOf(request: FastifyRequest, fingerprint?: string): IdempotencyRequest | undefined {
  const key = request.headers['x-idempotency-key'];
  if (!isWriteRequest(request) || typeof key !== 'string' || key === '') return undefined;
  // Only a caller that proved who it is has keys: a refused request stores nothing under one.
  const scope = request.auth ?? (request.operator ? OPERATOR_SCOPE : undefined);
  if (!scope) return undefined;
  return {
    businessId: scope.businessId,
    environment: scope.environment,
    key,
    fingerprint: fingerprint ?? requestFingerprint(request, withoutSecrets(request)),
  };
}

const MAX_CLAIM_ATTEMPTS = 3;

/**
 * Upload routes (`config.idempotency: 'upload'`) call this once they have read the body: the key
 * then covers the file's bytes, and from here on an error answer is stored under it too.
 */
export function fingerprintUpload(request: FastifyRequest, bytes: Buffer): void {
  request.uploadFingerprint = requestFingerprint(request, bytes);
}

/** What a write's transaction ended in: its own result, or the answer stored under its key. */
export type IdempotentOutcome<T> = { kind: 'done'; value: T } | { kind: 'replay'; status: number; body: string };

/**
 * The core of the write path, for every caller (API routes below, dashboard forms): one
 * transaction that claims the key (when there is one), runs `work`, and stores the answer `work`
 * says to keep under the key, so the effect and its stored answer commit together.
 */
export async function inIdempotentTransaction<T>(
  db: Kysely<DB>,
  idempotency: IdempotencyRequest | undefined,
  work: (trx: Transaction<DB>) => Promise<{ value: T; stored: { status: number; body: string } }>,
): Promise<IdempotentOutcome<T>> {
  for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
    const outcome = await db
      .transaction()
      .execute(async (trx): Promise<IdempotentOutcome<T> | { kind: 'retry' }> => {
        if (idempotency) {
          const claim = await claimKey(trx, idempotency);
          if (claim.kind !== 'claimed') return claim;
        }
        const { value, stored } = await work(trx);
        if (idempotency) await storeAnswer(trx, idempotency, stored);
        return { kind: 'done', value };
      })
      .catch((error: unknown) => {
        if (idempotency && isKeyTaken(error)) return { kind: 'retry' as const };
        throw error;
      });
    if (outcome.kind !== 'retry') return outcome;
  }
  throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS');
}

/**
 * What a write returns when it refuses the request yet keeps what it did, e.g. a wallet payment
 * that failed: the attempt is committed (FAILED, `payment.failed`) and answered with its error,
 * which is stored under the key like any answer.
 */
export class CommittedRefusal {
  constructor(readonly error: ApiError) {}
}

/** What a write may add to the plain path. */
export interface WriteOptions<T> {
  /** The key of a customer's write (`customerIdempotency`); an API write's comes from its request. */
  idempotency?: IdempotencyRequest | undefined;
  /**
   * What the key keeps of a successful answer, when that must differ from what is sent once: an
   * API key's text is shown to its creator and never stored, so a replay answers without it.
   */
  kept?: (data: T) => unknown;
  /** Runs after the commit and before the answer goes out (telling other processes of it). */
  afterCommit?: () => Promise<void>;
}

/** Runs a write in one transaction and answers with its result (see the top of this file). */
export async function respondInTransaction<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  statusCode: number,
  work: (trx: Transaction<DB>) => Promise<T | CommittedRefusal>,
  options: WriteOptions<T> = {},
): Promise<FastifyReply> {
  const db = request.server.services.db;
  const idempotency =
    'idempotency' in options ? options.idempotency : idempotencyOf(request, request.uploadFingerprint);
  const outcome = await inIdempotentTransaction<{ body: string; refusal: ApiError | undefined }>(
    db,
    idempotency,
    async (trx) => {
      const data = await work(trx);
      if (data instanceof CommittedRefusal) {
        const body = errorBody(data.error, request);
        return { value: { body, refusal: data.error }, stored: { status: data.error.status, body } };
      }
      reply.code(statusCode);
      const body = String(reply.serialize({ success: true, data }));
      const kept =
        options.kept && idempotency ? String(reply.serialize({ success: true, data: options.kept(data) })) : body;
      return { value: { body, refusal: undefined }, stored: { status: statusCode, body: kept } };
    },
  );
  if (outcome.kind === 'done' && options.afterCommit) await options.afterCommit();
  if (outcome.kind === 'replay') return sendStored(reply, outcome, true);
  if (outcome.value.refusal) return sendError(outcome.value.refusal, request, reply);
  return sendStored(reply, { status: statusCode, body: outcome.value.body }, false);
}

/** Answers the idempotency layer gives itself: never stored under the key they are about. */
const UNSTORED_CODES = new Set(['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REQUIRED']);

/**
 * The error handler's half of the write path: a write that ends in an error below 500 stores that
 * answer under its key (decisions: every outcome below 500 is kept), unless the key already has
 * one, which is then answered instead (replay, 422 or 409). Returns the reply when it answered.
 */
export async function storeErrorAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  error: ApiError,
  render: () => string,
): Promise<FastifyReply | undefined> {
  if (error.status >= 500 || UNSTORED_CODES.has(error.code)) return undefined;
  if (request.routeOptions.config.idempotency === 'upload' && request.uploadFingerprint === undefined) return undefined;
  const idempotency = idempotencyOf(request, request.uploadFingerprint);
  if (!idempotency) return undefined;
  const { db } = request.server.services;
  for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
    const claim = await claimKey(db, idempotency, { status: error.status, body: render() });
    if (claim.kind === 'claimed') return undefined; // stored: send it as usual
    if (claim.kind === 'replay') return sendStored(reply, claim, true);
  }
  return undefined;
}

/** Worker task: forget keys older than the retention period. */
export async function deleteExpiredIdempotencyKeys(db: Kysely<DB>): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where(sql<boolean>`created_at < now() - make_interval(hours => ${RETENTION_HOURS})`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
