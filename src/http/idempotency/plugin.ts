import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { DB, Environment } from '../../db/schema.js';
import { errorBody, sendError } from '../error-handler.js';
import { ApiError } from '../errors.js';
import { coveredBody, requestFingerprint } from './fingerprint.js';
import { claimKey, isKeyTaken, storeAnswer, type KeyIdentity, type StoredAnswer } from './store.js';

/**
 * The one write path. A write route declares its policy as data (`config.write`); its handler
 * hands its change to `write`, which runs it in one transaction that first claims the request's
 * idempotency key, then runs the change with the transaction and the request's input, then stores
 * the answer under the key, so the effect and its stored answer commit together or not at all. A
 * request that dies mid-way leaves nothing behind, and a retry with the same key executes it then.
 * A refusal below 500 is stored by the same path (`answerError`, from the error handler), for the
 * callers whose refusals are kept.
 */

/**
 * Who a write serves, which decides the key's scope: the API key's business and environment, the
 * operator, or (customer pages, dashboard forms) a scope the route gives at write time with the
 * customer or user the key belongs to.
 */
export type WriteServes = 'api-key' | 'operator' | 'customer' | 'dashboard';

export interface WritePolicy {
  serves: WriteServes;
  /**
   * Where the key comes from: the `X-Idempotency-Key` header, `required` or `optional`; `form`:
   * the dashboard form's hidden `_idem` token; `none`: a plain transaction.
   */
  key: 'required' | 'optional' | 'form' | 'none';
  /**
   * `body`: the key covers the body. `upload`: the file's bytes, which the route's multipart hook
   * made the body; an error before that (no file, too large) is not stored under the key.
   */
  covers: 'body' | 'upload';
  /** Body fields the key leaves out of its fingerprint: the same key with another PIN replays. */
  secretFields?: readonly string[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every write route: how `write` claims its key and answers (see src/http/idempotency). */
    write?: WritePolicy;
  }
}

export const API_WRITE = { serves: 'api-key', key: 'required', covers: 'body' } as const satisfies WritePolicy;
export const API_UPLOAD = { ...API_WRITE, covers: 'upload' } as const satisfies WritePolicy;
/** The operator API takes a key when given one (a script crediting wallets should send it). */
export const OPERATOR_WRITE = { serves: 'operator', key: 'optional', covers: 'body' } as const satisfies WritePolicy;
/** The hosted pages' writes: a key when the page sends one, never covering the PIN. */
export const CUSTOMER_WRITE = {
  serves: 'customer',
  key: 'optional',
  covers: 'body',
  secretFields: ['pin'],
} as const satisfies WritePolicy;
/** A customer's change reached by an unguessable link: no key, a plain transaction. */
export const CUSTOMER_LINK_WRITE = { serves: 'customer', key: 'none', covers: 'body' } as const satisfies WritePolicy;
/** A dashboard form: its `_idem` token is the key; the CSRF token is not part of what it covers. */
export const FORM_WRITE = {
  serves: 'dashboard',
  key: 'form',
  covers: 'body',
  secretFields: ['_csrf'],
} as const satisfies WritePolicy;

/**
 * A wallet app form (src/modules/walletapp), posted by a payer signed in with their phone and PIN:
 * its `_idem` token is the key, in the wallet's scope (`walletFormScope`), so a double-submitted
 * approval replays its first answer instead of paying twice. Neither the CSRF token nor the PIN
 * typed again to approve is covered (a PIN is never kept beside a key).
 */
export const WALLET_FORM_WRITE = {
  serves: 'customer',
  key: 'form',
  covers: 'body',
  secretFields: ['_csrf', 'pin'],
} as const satisfies WritePolicy;
/**
 * The wallet app's sign-in: a plain transaction without a key. Its answer is a new session, a
 * secret that is never stored to be sent again; a repeated sign-in opens a second session.
 */
export const WALLET_SIGN_IN_WRITE = { serves: 'customer', key: 'none', covers: 'body' } as const satisfies WritePolicy;

/** Whose refusals below 500 are kept under the key: a customer's or a form's took nothing. */
const STORES_REFUSALS: Record<WriteServes, boolean> = {
  'api-key': true,
  operator: true,
  customer: false,
  dashboard: false,
};
/**
 * How long a repeat waits for the first request with its key: a form's (a double click, a browser
 * resending it) waits for the first answer and shows it, since a browser shows only the last
 * answer it gets; an API caller is told IN_PROGRESS at once and retries.
 */
const inProgressWaitMs = (policy: WritePolicy): number => (policy.key === 'form' ? 5_000 : 0);
const MAX_CLAIM_ATTEMPTS = 3;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;
const FORM_TOKEN = /^[A-Za-z0-9]{16,64}$/;

/**
 * The scope of the operator API's keys: no business owns them. Business ids are `biz_…`, so this
 * scope never meets a business's keys; the environment column means nothing for it.
 */
const OPERATOR_SCOPE = { businessId: 'operator', environment: 'live' } as const;

/** The scope of a wallet app form's key: no business owns a payer's forms, so theirs is `wallet` (never a `biz_…`). */
export function walletFormScope(environment: Environment, walletId: string): KeyScope {
  return { businessId: 'wallet', environment, who: walletId };
}

/** The scope of a customer's or dashboard user's key: the business and mode it writes to, and who. */
export interface KeyScope {
  businessId: string;
  environment: Environment;
  who: string;
  /**
   * A form's key when the route derives it from what the form carries, instead of its `_idem`
   * token: a sealed payout batch is keyed by its seal, so whatever token comes with it, it is
   * confirmed once.
   */
  token?: string;
}

/**
 * Startup check: a route an API key may write through declares its policy, so that none is left
 * without the key the API requires.
 */
export function registerWritePath(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    const writes = [route.method].flat().some((method) => WRITE_METHODS.has(method));
    if (writes && (auth === 'secret' || auth === 'publishable') && !route.config?.write) {
      throw new Error(`${String(route.method)} ${route.url}: a write route declares its config.write policy`);
    }
  });
}

/**
 * Runs after authentication: a header key must be well formed, and is there when the route
 * requires one (every Developer API write). A malformed key is refused before any work, so it
 * never costs a customer a PIN attempt.
 */
export function checkIdempotencyKey(request: FastifyRequest): void {
  const policy = request.routeOptions.config.write;
  if (!policy || (policy.key !== 'required' && policy.key !== 'optional')) return;
  const key = request.headers['x-idempotency-key'];
  if (key === undefined || key === '') {
    if (policy.key === 'required') throw new ApiError('IDEMPOTENCY_KEY_REQUIRED');
    return;
  }
  if (typeof key !== 'string' || !KEY_FORMAT.test(key)) {
    throw new ApiError('VALIDATION_ERROR', 'X-Idempotency-Key must be 1 to 255 printable ASCII characters.', [
      { field: 'header.x-idempotency-key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
  }
}

/** Whether the request carries a header key (a customer's payment skips a pre-check with one). */
export function hasIdempotencyKey(request: FastifyRequest): boolean {
  return headerKey(request) !== undefined;
}

function headerKey(request: FastifyRequest): string | undefined {
  const key = request.headers['x-idempotency-key'];
  return typeof key === 'string' && KEY_FORMAT.test(key) ? key : undefined;
}

function formToken(request: FastifyRequest): string {
  const token = (request.body as Record<string, unknown> | undefined)?._idem;
  if (typeof token !== 'string' || !FORM_TOKEN.test(token)) {
    throw new ApiError('VALIDATION_ERROR', 'The form is incomplete: reload the page and try again.', [
      { field: 'body._idem', message: 'is required' },
    ]);
  }
  return token;
}

function policyOf(request: FastifyRequest): WritePolicy {
  const policy = request.routeOptions.config.write;
  if (!policy) throw new Error(`${request.method} ${request.routeOptions.url}: a write route without config.write`);
  return policy;
}

/**
 * The request's key and what it covers, or undefined when it has none. Only a caller that proved
 * who it is has keys: a refused request (401) stores nothing under one.
 */
function keyOf(request: FastifyRequest, policy: WritePolicy, scope: KeyScope | undefined): KeyIdentity | undefined {
  let owner: { businessId: string; environment: Environment } | undefined;
  let key: string | undefined;
  switch (policy.serves) {
    case 'api-key':
      owner = request.auth;
      key = headerKey(request);
      break;
    case 'operator':
      owner = request.operator ? OPERATOR_SCOPE : undefined;
      key = headerKey(request);
      break;
    case 'customer':
    case 'dashboard': {
      if (policy.key === 'none') return undefined;
      if (!scope)
        throw new Error(`${request.method} ${request.routeOptions.url}: a ${policy.serves} write gives its scope`);
      const given = policy.key === 'form' ? (scope.token ?? formToken(request)) : headerKey(request);
      owner = scope;
      key = given !== undefined ? `${policy.serves}:${scope.who}:${given}` : undefined;
      break;
    }
  }
  if (!owner || key === undefined) return undefined;
  return {
    businessId: owner.businessId,
    environment: owner.environment,
    key,
    fingerprint: requestFingerprint(request, coveredBody(request.body, policy.secretFields)),
  };
}

/** What a write's transaction ended in: its own result, or the answer stored under its key. */
export type WriteOutcome<T> = { kind: 'done'; value: T } | ({ kind: 'replay' } & StoredAnswer);

/**
 * The core: one transaction that claims the key (when there is one), runs `work`, and stores the
 * answer `work` says to keep, so the effect and its stored answer commit together. A key another
 * request committed meanwhile (or an expired one) means another attempt, at most three.
 */
async function inKeyedTransaction<T>(
  db: Kysely<DB>,
  identity: KeyIdentity | undefined,
  waitMs: number,
  work: (trx: Transaction<DB>) => Promise<{ value: T; stored: StoredAnswer }>,
): Promise<WriteOutcome<T>> {
  const deadline = Date.now() + waitMs;
  let attempts = 0;
  for (;;) {
    let outcome: WriteOutcome<T> | { kind: 'retry' };
    try {
      outcome = await db.transaction().execute(async (trx): Promise<WriteOutcome<T> | { kind: 'retry' }> => {
        if (identity) {
          const claim = await claimKey(trx, identity);
          if (claim.kind !== 'claimed') return claim;
        }
        const { value, stored } = await work(trx);
        if (identity) await storeAnswer(trx, identity, stored);
        return { kind: 'done', value };
      });
    } catch (error) {
      if (identity && isKeyTaken(error)) {
        outcome = { kind: 'retry' };
      } else if (error instanceof ApiError && error.code === 'IDEMPOTENCY_KEY_IN_PROGRESS' && Date.now() < deadline) {
        // The first request with this key is still running: answer as it will, once it is done.
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      } else {
        throw error;
      }
    }
    if (outcome.kind !== 'retry') return outcome;
    if (++attempts >= MAX_CLAIM_ATTEMPTS) throw new KeyKeptChanging();
  }
}

/** The key was taken and freed again under each of our attempts: answered as a key in use. */
class KeyKeptChanging extends ApiError {
  constructor() {
    super('IDEMPOTENCY_KEY_IN_PROGRESS');
  }
}

/** A write whose answer is not the JSON envelope (a dashboard form's redirect), in two steps. */
export interface KeyedWrite {
  /** The request's key, read before anything runs: a form without its token is refused here. */
  identity: KeyIdentity | undefined;
  run<T>(work: (trx: Transaction<DB>) => Promise<{ value: T; stored: StoredAnswer }>): Promise<WriteOutcome<T>>;
}

export function keyedWrite(request: FastifyRequest, scope: KeyScope | undefined): KeyedWrite {
  const policy = policyOf(request);
  const identity = keyOf(request, policy, scope);
  return {
    identity,
    run: (work) => inKeyedTransaction(request.server.services.db, identity, inProgressWaitMs(policy), work),
  };
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
  /** A customer's key scope, known once the route found the shop or intent and checked the PIN. */
  scope?: KeyScope;
  /**
   * What the key keeps of a successful answer, when that must differ from what is sent once: an
   * API key's text is shown to its creator and never stored, so a replay answers without it.
   */
  kept?: (data: T) => unknown;
  /** Runs after the commit and before the answer goes out (telling other processes of it). */
  afterCommit?: () => Promise<void>;
}

function sendStored(reply: FastifyReply, stored: StoredAnswer, replayed: boolean): FastifyReply {
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.code(stored.status).type('application/json; charset=utf-8').send(stored.body);
}

/**
 * Runs a write route's change (`work`, given the transaction and the request's body) under the
 * route's policy and answers with `status` and the change's result in the envelope.
 */
export async function write<R extends FastifyRequest, T>(
  request: R,
  reply: FastifyReply,
  status: number,
  work: (trx: Transaction<DB>, input: R['body']) => Promise<T | CommittedRefusal>,
  options: WriteOptions<T> = {},
): Promise<FastifyReply> {
  const keyed = keyedWrite(request, options.scope);
  const outcome = await keyed.run(async (trx) => {
    const data = await work(trx, request.body);
    if (data instanceof CommittedRefusal) {
      const body = errorBody(data.error, request);
      return { value: { body, refusal: data.error }, stored: { status: data.error.status, body } };
    }
    reply.code(status);
    const body = String(reply.serialize({ success: true, data }));
    const kept =
      options.kept && keyed.identity ? String(reply.serialize({ success: true, data: options.kept(data) })) : body;
    return { value: { body, refusal: undefined as ApiError | undefined }, stored: { status, body: kept } };
  });
  if (outcome.kind === 'replay') return sendStored(reply, outcome, true);
  if (options.afterCommit) await options.afterCommit();
  if (outcome.value.refusal) return sendError(outcome.value.refusal, request, reply);
  return sendStored(reply, { status, body: outcome.value.body }, false);
}

/**
 * Never stored under the key they are about: the answers the idempotency layer gives itself, and
 * a "retry later" (429), so that the retry with the same key is carried out.
 */
const UNSTORED_CODES = new Set([
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_KEY_IN_PROGRESS',
  'IDEMPOTENCY_KEY_REQUIRED',
  'TOO_MANY_PENDING_PAYOUTS',
]);

/**
 * The error handler's half of the write path: a refusal below 500 of a write whose refusals are
 * kept is stored under its key through the same transaction as any answer (claim, then store),
 * unless the key already has an answer, which is then replayed. Returns the reply when it answered.
 */
export async function answerError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: ApiError,
): Promise<FastifyReply | undefined> {
  const policy = request.routeOptions.config.write;
  if (!policy || !STORES_REFUSALS[policy.serves] || error.status >= 500 || UNSTORED_CODES.has(error.code)) {
    return undefined;
  }
  if (policy.covers === 'upload' && !Buffer.isBuffer(request.body)) return undefined;
  const identity = keyOf(request, policy, undefined);
  if (!identity) return undefined;
  const stored = { status: error.status, body: errorBody(error, request) };
  try {
    const outcome = await inKeyedTransaction(request.server.services.db, identity, 0, async () => ({
      value: undefined,
      stored,
    }));
    return outcome.kind === 'replay' ? sendStored(reply, outcome, true) : undefined;
  } catch (claimError) {
    // A refusal that could not be kept is still the answer: sent as it is, unstored.
    if (claimError instanceof KeyKeptChanging) return undefined;
    throw claimError;
  }
}
