import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { PreparedStatement } from '../db/connect.js';
import type { DB } from '../db/schema.js';
import { ApiError } from './errors.js';

/** A request's hold on its idempotency key, proven by the token it wrote. */
export interface IdempotencyClaim {
  rowId: number;
  token: string;
  /** Set once the response is stored, so the onSend hook leaves the row alone. */
  settled: boolean;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;
export const RETENTION_HOURS = 24;
/** A claim older than this belongs to a request that died: another may take it over. */
const STALE_CLAIM_SECONDS = 60;

export function isWriteRequest(request: FastifyRequest): boolean {
  return WRITE_METHODS.has(request.method) && (request.routeOptions.config.auth ?? 'none') !== 'none';
}

/** Runs after authentication: every authenticated write must carry a well-formed key. */
export function requireIdempotencyKey(request: FastifyRequest): void {
  if (!isWriteRequest(request)) return;
  const key = request.headers['x-idempotency-key'];
  if (key === undefined || key === '') throw new ApiError('IDEMPOTENCY_KEY_REQUIRED');
  if (typeof key !== 'string' || !KEY_FORMAT.test(key)) {
    throw new ApiError('VALIDATION_ERROR', 'X-Idempotency-Key must be 1 to 255 printable ASCII characters.', [
      { field: 'header.x-idempotency-key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
  }
}

function canonicalJson(value: unknown): string {
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

/** Every write runs this first: a prepared statement saves parsing and planning each time. */
const CLAIM_KEY: PreparedStatement = {
  name: 'idempotency_claim',
  text: `INSERT INTO idempotency_keys (business_id, environment, idempotency_key, fingerprint, state, lock_token, locked_at)
         VALUES ($1, $2, $3, $4, 'running', $5, now())
         ON CONFLICT (business_id, environment, idempotency_key) DO NOTHING
         RETURNING id`,
};

/**
 * Claims the request's idempotency key, or answers for it: the stored response (replay), 422
 * when the key was used for another request, 409 while the first request is still running.
 * Returns true when the caller should go on and execute the request.
 */
export async function claimIdempotencyKey(
  request: FastifyRequest,
  reply: FastifyReply,
  fingerprint: string,
): Promise<boolean> {
  const auth = request.auth;
  const key = request.headers['x-idempotency-key'];
  if (!auth || typeof key !== 'string') return true;
  const { db, database } = request.server.services;

  for (let attempt = 0; attempt < 3; attempt++) {
    const token = randomUUID();
    const [inserted] = await database.query<{ id: number }>(CLAIM_KEY, [
      auth.businessId,
      auth.environment,
      key,
      fingerprint,
      token,
    ]);
    if (inserted) {
      request.idempotency = { rowId: inserted.id, token, settled: false };
      return true;
    }

    const existing = await db
      .selectFrom('idempotency_keys')
      .select([
        'id',
        'fingerprint',
        'state',
        'lock_token',
        'response_status',
        'response_body',
        sql<boolean>`created_at < now() - make_interval(hours => ${RETENTION_HOURS})`.as('expired'),
        sql<boolean>`locked_at < now() - make_interval(secs => ${STALE_CLAIM_SECONDS})`.as('stale'),
      ])
      .where('business_id', '=', auth.businessId)
      .where('environment', '=', auth.environment)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    if (!existing) continue; // released between our insert and select: try again
    if (existing.expired) {
      await db.deleteFrom('idempotency_keys').where('id', '=', existing.id).execute();
      continue;
    }
    if (existing.fingerprint !== fingerprint) throw new ApiError('IDEMPOTENCY_KEY_REUSED');
    if (existing.state === 'done' && existing.response_status !== null && existing.response_body !== null) {
      await reply
        .code(existing.response_status)
        .header('Idempotent-Replayed', 'true')
        .type('application/json; charset=utf-8')
        .send(existing.response_body);
      return false;
    }
    if (existing.stale && existing.lock_token) {
      // The first request died without finishing. Its effect did not commit (completion is part
      // of the effect's transaction), so taking the claim over cannot execute it twice.
      const taken = await db
        .updateTable('idempotency_keys')
        .set({ lock_token: token, locked_at: sql<Date>`now()` })
        .where('id', '=', existing.id)
        .where('lock_token', '=', existing.lock_token)
        .where('state', '=', 'running')
        .returning('id')
        .executeTakeFirst();
      if (taken) {
        request.idempotency = { rowId: existing.id, token, settled: false };
        return true;
      }
    }
    throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS');
  }
  throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS');
}

async function storeResponse(
  executor: Pick<Transaction<DB>, 'updateTable'>,
  claim: IdempotencyClaim,
  status: number,
  body: string,
): Promise<boolean> {
  const result = await executor
    .updateTable('idempotency_keys')
    .set({ state: 'done', response_status: status, response_body: body, lock_token: null, locked_at: null })
    .where('id', '=', claim.rowId)
    .where('lock_token', '=', claim.token)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Runs a write in one transaction and answers with its result. The idempotent response is
 * stored in that same transaction: either the effect and its stored response both commit, or
 * neither does, so a retry can never execute the effect a second time.
 */
export async function respondInTransaction<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  statusCode: number,
  work: (trx: Transaction<DB>) => Promise<T>,
): Promise<FastifyReply> {
  const claim = request.idempotency;
  const body = await request.server.services.db.transaction().execute(async (trx) => {
    const data = await work(trx);
    reply.code(statusCode);
    const serialized = String(reply.serialize({ success: true, data }));
    if (claim && !(await storeResponse(trx, claim, statusCode, serialized))) {
      throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS');
    }
    return serialized;
  });
  if (claim) claim.settled = true;
  return reply.code(statusCode).type('application/json; charset=utf-8').send(body);
}

/**
 * onSend: a claimed request that did not store its response in its transaction (an error, or
 * a route without one) stores it now if it is below 500; a 5xx frees the key for a retry.
 */
export async function settleIdempotencyOnSend(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<void> {
  const claim = request.idempotency;
  if (!claim || claim.settled) return;
  claim.settled = true;
  const { db } = request.server.services;
  try {
    if (reply.statusCode < 500 && typeof payload === 'string') {
      await storeResponse(db, claim, reply.statusCode, payload);
    } else {
      await db
        .deleteFrom('idempotency_keys')
        .where('id', '=', claim.rowId)
        .where('lock_token', '=', claim.token)
        .execute();
    }
  } catch (error) {
    request.log.error({ err: error }, 'could not settle idempotency key');
  }
}

/** Worker task: forget keys older than the retention period. */
export async function deleteExpiredIdempotencyKeys(db: Kysely<DB>): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where(sql<boolean>`created_at < now() - make_interval(hours => ${RETENTION_HOURS})`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
