/**
 * A business's API keys as rows: issued, listed, found, suspended, revoked, rolled. The key as a
 * credential (its text, its cache, its scopes, its expiry) is modules/keys, a floor below http,
 * which authenticates requests with it; the acts a caller does on keys, with their audit entries
 * and events, are modules/api-keys.
 */
import { sql } from 'kysely';
import type { Environment, KeyKind, KeyListStatus, KeyStatus } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { listStatus } from '../keys/expiry.js';
import { generateKeyText, hashKey, keyHint } from '../keys/key-text.js';
import { defaultScopes } from '../keys/scopes.js';

export interface KeyView {
  id: string;
  businessId: string;
  name: string | null;
  kind: KeyKind;
  environment: Environment;
  scopes: string[];
  ipAllowlist: string[];
  status: KeyListStatus;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  lastUsedIp: string | null;
  expiresAt: string | null;
  /** The key that replaced this one when it was rolled. */
  replacedBy: string | null;
}

/** A key as returned once, at creation or roll: the only time its text is known. */
export interface IssuedKey extends KeyView {
  key: string;
}

export interface NewKey {
  businessId: string;
  kind: KeyKind;
  environment: Environment;
  name?: string | null | undefined;
  scopes?: string[] | undefined;
  ipAllowlist?: string[] | undefined;
  expiresAt?: Date | null | undefined;
}

export type KeyRow = {
  id: string;
  business_id: string;
  name: string | null;
  kind: KeyKind;
  environment: Environment;
  scopes: string[];
  ip_allowlist: string[];
  status: KeyStatus;
  key_hint: string;
  created_at: Date;
  last_used_at: Date | null;
  last_used_ip: string | null;
  expires_at: Date | null;
  replaced_by: string | null;
};

export function toView(row: KeyRow, now = Date.now()): KeyView {
  return {
    id: row.id,
    businessId: row.business_id,
    name: row.name,
    kind: row.kind,
    environment: row.environment,
    scopes: row.scopes,
    ipAllowlist: row.ip_allowlist,
    status: listStatus({ status: row.status, expiresAt: row.expires_at }, now),
    hint: row.key_hint,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    lastUsedIp: row.last_used_ip,
    expiresAt: row.expires_at?.toISOString() ?? null,
    replacedBy: row.replaced_by,
  };
}

export const keyColumns = [
  'id',
  'business_id',
  'name',
  'kind',
  'environment',
  'scopes',
  'ip_allowlist',
  'status',
  'key_hint',
  'created_at',
  'last_used_at',
  'last_used_ip',
  'expires_at',
  'replaced_by',
] as const;

export async function issueKey(db: Executor, input: NewKey): Promise<IssuedKey> {
  const text = generateKeyText(input.kind, input.environment);
  const row = await db
    .insertInto('api_keys')
    .values({
      id: newId('key'),
      business_id: input.businessId,
      kind: input.kind,
      environment: input.environment,
      key_hash: hashKey(text),
      key_hint: keyHint(text),
      scopes: input.scopes ?? [...defaultScopes],
      ip_allowlist: input.ipAllowlist ?? [],
      name: input.name ?? null,
      expires_at: input.expiresAt ?? null,
    })
    .returning(keyColumns)
    .executeTakeFirstOrThrow();
  return { ...toView(row), key: text };
}

/** Every key of a business, oldest first (the operator's list). */
export async function listKeys(db: Executor, businessId: string): Promise<KeyView[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(keyColumns)
    .where('business_id', '=', businessId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => toView(row));
}

/** The keys of one business and environment, newest first, a page at a time. */
export async function listEnvironmentKeys(
  db: Executor,
  owner: { businessId: string; environment: Environment },
  page: { limit: number; offset: number },
): Promise<{ items: KeyView[]; total: number }> {
  const base = db
    .selectFrom('api_keys')
    .where('business_id', '=', owner.businessId)
    .where('environment', '=', owner.environment);
  const [rows, count] = await Promise.all([
    base
      .select(keyColumns)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map((row) => toView(row)), total: Number(count.n) };
}

/** A key's row, locked for the act about to change it; undefined when there is none. */
export async function lockKey(db: Executor, keyId: string): Promise<KeyRow | undefined> {
  return db.selectFrom('api_keys').select(keyColumns).where('id', '=', keyId).forUpdate().executeTakeFirst();
}

/**
 * Suspends or revokes a key. A rolled key in its overlap can be revoked (a leaked key stops at
 * once); a revoked key stays revoked. `changed` says whether this call changed it.
 */
export async function changeKeyStatus(
  db: Executor,
  keyId: string,
  status: 'suspended' | 'revoked',
): Promise<{ key: KeyView; changed: boolean }> {
  const row = await db
    .updateTable('api_keys')
    .set({ status, updated_at: sql<Date>`now()` })
    .where('id', '=', keyId)
    .where('status', 'in', status === 'suspended' ? ['active'] : ['active', 'suspended', 'rotated'])
    .returning(keyColumns)
    .executeTakeFirst();
  if (row) return { key: toView(row), changed: true };
  const existing = await db.selectFrom('api_keys').select(keyColumns).where('id', '=', keyId).executeTakeFirst();
  if (!existing) throw new ApiError('API_KEY_NOT_FOUND', `No API key ${keyId}.`);
  return { key: toView(existing), changed: false };
}

/** Less than this much overlap is told by `api_key.rolled` alone, not by `api_key.expiring` too. */
export const EXPIRING_NOTICE_MS = 24 * 3600 * 1000;

/**
 * Issues a successor with the same name, kind, scopes and allowlist; the old key, `rotated`,
 * keeps working `overlapSeconds` more (0: refused from now), never beyond an expiry it already
 * had. Only an active key rolls: a suspended one would hand out an active successor (a
 * suspension undone by accident); the caller has locked `old` (lockKey).
 */
export async function rollKey(
  trx: Executor,
  old: KeyRow,
  overlapSeconds: number,
  now = new Date(),
): Promise<{ successor: IssuedKey; old: KeyView }> {
  if (old.status !== 'active' || (old.expires_at !== null && old.expires_at <= now)) {
    throw new ApiError('API_KEY_NOT_ACTIVE', `API key ${old.id} is not active and cannot be rolled.`);
  }
  const successor = await issueKey(trx, {
    businessId: old.business_id,
    kind: old.kind,
    environment: old.environment,
    name: old.name,
    scopes: old.scopes,
    ipAllowlist: old.ip_allowlist,
  });
  let until = new Date(now.getTime() + overlapSeconds * 1000);
  if (old.expires_at !== null && old.expires_at < until) until = old.expires_at;
  const rolled = await trx
    .updateTable('api_keys')
    .set({
      status: 'rotated',
      replaced_by: successor.id,
      expires_at: until,
      // An overlap under a day: `api_key.rolled` already told when it ends.
      ...(until.getTime() - now.getTime() <= EXPIRING_NOTICE_MS ? { expiring_sent_at: now } : {}),
      updated_at: now,
    })
    .where('id', '=', old.id)
    .returning(keyColumns)
    .executeTakeFirstOrThrow();
  return { successor, old: toView(rolled, now.getTime()) };
}
