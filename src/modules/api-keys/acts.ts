/**
 * What a caller does to a business's keys (issue 53 item 3, decision 084): create, roll, revoke,
 * each with its audit entry and its event in the act's own transaction, whoever the caller is: a
 * key through the API, a dashboard user, the operator. A key caller never gets a key beyond
 * itself: no scope it lacks, no key of the other environment.
 */
import type { Environment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError, invalid } from '../../http/errors.js';
import { recordAudit, type AuditActor } from '../audit/record.js';
import {
  changeKeyStatus,
  issueKey,
  lockKey,
  rollKey,
  type IssuedKey,
  type KeyRow,
  type KeyView,
  type NewKey,
} from '../businesses/keys.js';
import { eventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { defaultScopes } from '../keys/scopes.js';

/** Who acts on keys: the audit's actor, and, for a key, the scopes it holds (the ceiling of what it makes). */
export interface KeyActor {
  actor: AuditActor;
  /**
   * The ceiling of what the act may give: the acting key's scopes, or a member's
   * (`scopesMemberMayGive`); undefined for the operator.
   */
  scopes?: readonly string[] | undefined;
}

/** Whose keys an act may touch: one business and environment; null for the operator (any key). */
export type KeyOwner = { businessId: string; environment: Environment } | null;

/** A publishable key sits in a browser: it may only read (decision 084). */
export function publishableAllows(scope: string): boolean {
  return scope.endsWith(':read');
}

/** Refuses scopes the acting key does not hold itself. */
function checkCeiling(by: KeyActor, scopes: readonly string[]): void {
  if (!by.scopes) return;
  const beyond = scopes.filter((scope) => !by.scopes!.includes(scope));
  if (beyond.length > 0) {
    const who = by.actor.kind === 'user' ? "This member's role" : 'This API key';
    throw new ApiError('SCOPE_ESCALATION', `${who} does not hold ${beyond.join(', ')} and cannot give it.`);
  }
}

/**
 * The scopes a new key gets: those asked for, or, with none asked, the default scopes the acting
 * key holds (a publishable key: their reads).
 */
export function scopesFor(by: KeyActor, kind: NewKey['kind'], asked: readonly string[] | undefined): string[] {
  if (asked === undefined) {
    return defaultScopes.filter(
      (scope) => (!by.scopes || by.scopes.includes(scope)) && (kind === 'secret' || publishableAllows(scope)),
    );
  }
  const scopes = [...new Set(asked)];
  if (kind === 'publishable' && !scopes.every(publishableAllows)) {
    throw invalid('scopes', 'of a publishable key must be reads (scopes ending in :read)');
  }
  checkCeiling(by, scopes);
  return scopes;
}

export function keyEventData(key: KeyView) {
  return {
    id: key.id,
    name: key.name,
    kind: key.kind,
    hint: key.hint,
    scopes: key.scopes,
    status: key.status,
    expiresAt: key.expiresAt,
    replacedBy: key.replacedBy,
  };
}

/**
 * A key with an expiry never makes a key that outlives it: otherwise a rolled key, in its overlap
 * (a leaked key being replaced), could mint a lasting one. Read in the act's transaction.
 */
async function checkLifetime(trx: Executor, by: KeyActor, expiresAt: Date | null): Promise<void> {
  if (by.actor.kind !== 'api_key' || by.actor.id === null) return;
  const acting = await trx.selectFrom('api_keys').select('expires_at').where('id', '=', by.actor.id).executeTakeFirst();
  const limit = acting?.expires_at ?? null;
  if (limit !== null && (expiresAt === null || expiresAt > limit)) {
    throw new ApiError(
      'SCOPE_ESCALATION',
      `This API key stops working on ${limit.toISOString()} and cannot make a key that outlives it.`,
    );
  }
}

export async function createKey(trx: Executor, by: KeyActor, input: NewKey): Promise<IssuedKey> {
  const scopes = scopesFor(by, input.kind, input.scopes);
  await checkLifetime(trx, by, input.expiresAt ?? null);
  const key = await issueKey(trx, { ...input, scopes });
  await recordAudit(trx, {
    businessId: key.businessId,
    environment: key.environment,
    action: 'api_key.created',
    actor: by.actor,
    target: { kind: 'api_key', id: key.id },
    details: { name: key.name, kind: key.kind, hint: key.hint, scopes: key.scopes, expiresAt: key.expiresAt },
  });
  return key;
}

/** The key an act is about, locked: API_KEY_NOT_FOUND for another business's, SANDBOX_MISMATCH for the other environment's. */
async function ownKey(trx: Executor, owner: KeyOwner, keyId: string): Promise<KeyRow> {
  const key = await lockKey(trx, keyId);
  if (!key || (owner && key.business_id !== owner.businessId)) {
    throw new ApiError('API_KEY_NOT_FOUND', `No API key ${keyId}.`);
  }
  if (owner && key.environment !== owner.environment) {
    throw new ApiError('SANDBOX_MISMATCH', `API key ${keyId} is a ${key.environment} key.`);
  }
  return key;
}

/** A successor now, the old key working `overlapSeconds` more; `api_key.rolled` and its audit entry. */
export async function rollKeyAct(
  trx: Executor,
  by: KeyActor,
  owner: KeyOwner,
  keyId: string,
  overlapSeconds: number,
): Promise<IssuedKey> {
  const old = await ownKey(trx, owner, keyId);
  checkCeiling(by, old.scopes);
  // The successor has no expiry.
  await checkLifetime(trx, by, null);
  const now = new Date();
  const rolled = await rollKey(trx, old, overlapSeconds, now);
  const owned = { businessId: old.business_id, environment: old.environment };
  await unitOfWork()
    .events([eventRecord('api_key.rolled', owned, old.id, keyEventData(rolled.old), now)])
    .run(trx);
  await recordAudit(trx, {
    ...owned,
    action: 'api_key.rolled',
    actor: by.actor,
    target: { kind: 'api_key', id: old.id },
    details: { hint: rolled.old.hint, successor: rolled.successor.id, overlapSeconds, until: rolled.old.expiresAt },
  });
  return rolled.successor;
}

/** Refused from now on (the caller tells the key caches after the commit); `api_key.revoked` when it changed. */
export async function revokeKeyAct(trx: Executor, by: KeyActor, owner: KeyOwner, keyId: string): Promise<KeyView> {
  await ownKey(trx, owner, keyId);
  const { key, changed } = await changeKeyStatus(trx, keyId, 'revoked');
  if (!changed) return key;
  const owned = { businessId: key.businessId, environment: key.environment };
  await unitOfWork()
    .events([eventRecord('api_key.revoked', owned, key.id, keyEventData(key))])
    .run(trx);
  await recordAudit(trx, {
    ...owned,
    action: 'api_key.revoked',
    actor: by.actor,
    target: { kind: 'api_key', id: key.id },
    details: { hint: key.hint },
  });
  return key;
}
