/**
 * A business's API keys: issued, listed, suspended, rotated. The key as a credential (its text, its
 * cache, its scopes) is modules/keys, a floor below http, which authenticates requests with it.
 */
import { sql } from 'kysely';
import type { Environment, KeyKind, KeyStatus } from '../../db/schema.js';
import { inTransaction, type Executor } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { generateKeyText, hashKey, keyHint } from '../keys/key-text.js';
import { defaultScopes } from '../keys/scopes.js';

export interface KeyView {
  id: string;
  businessId: string;
  kind: KeyKind;
  environment: Environment;
  scopes: string[];
  ipAllowlist: string[];
  status: KeyStatus;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A key as returned once, at creation or rotation: the only time its text is known. */
export interface IssuedKey extends KeyView {
  key: string;
}

export interface NewKey {
  businessId: string;
  kind: KeyKind;
  environment: Environment;
  scopes?: string[] | undefined;
  ipAllowlist?: string[] | undefined;
}

type KeyRow = {
  id: string;
  business_id: string;
  kind: KeyKind;
  environment: Environment;
  scopes: string[];
  ip_allowlist: string[];
  status: KeyStatus;
  key_hint: string;
  created_at: Date;
  last_used_at: Date | null;
};

function toView(row: KeyRow): KeyView {
  return {
    id: row.id,
    businessId: row.business_id,
    kind: row.kind,
    environment: row.environment,
    scopes: row.scopes,
    ipAllowlist: row.ip_allowlist,
    status: row.status,
    hint: row.key_hint,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

const keyColumns = [
  'id',
  'business_id',
  'kind',
  'environment',
  'scopes',
  'ip_allowlist',
  'status',
  'key_hint',
  'created_at',
  'last_used_at',
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
    })
    .returning(keyColumns)
    .executeTakeFirstOrThrow();
  return { ...toView(row), key: text };
}

export async function listKeys(db: Executor, businessId: string): Promise<KeyView[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(keyColumns)
    .where('business_id', '=', businessId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toView);
}

export async function setKeyStatus(db: Executor, keyId: string, status: 'suspended' | 'revoked'): Promise<KeyView> {
  const row = await db
    .updateTable('api_keys')
    .set({ status, updated_at: sql<Date>`now()` })
    .where('id', '=', keyId)
    .where('status', 'in', status === 'suspended' ? ['active'] : ['active', 'suspended'])
    .returning(keyColumns)
    .executeTakeFirst();
  if (row) return toView(row);
  const existing = await db.selectFrom('api_keys').select(keyColumns).where('id', '=', keyId).executeTakeFirst();
  if (!existing) throw new ApiError('NOT_FOUND', `No API key ${keyId}.`);
  return toView(existing);
}

/**
 * Issues a successor with the same settings; the old key answers INVALID_API_KEY from now on.
 * Only an active key rotates: a suspended one would hand out an active successor (a suspension
 * undone by accident), and there is no way back from suspended, so it is refused like a revoked
 * one; revoke it and issue a new key instead.
 */
export async function rotateKey(db: Executor, keyId: string): Promise<IssuedKey> {
  return inTransaction(db, async (trx) => {
    const old = await trx
      .selectFrom('api_keys')
      .select(['id', 'business_id', 'kind', 'environment', 'scopes', 'ip_allowlist', 'status'])
      .where('id', '=', keyId)
      .forUpdate()
      .executeTakeFirst();
    if (!old) throw new ApiError('NOT_FOUND', `No API key ${keyId}.`);
    if (old.status !== 'active') {
      throw new ApiError('VALIDATION_ERROR', `API key ${keyId} is ${old.status} and cannot be rotated.`);
    }
    const successor = await issueKey(trx, {
      businessId: old.business_id,
      kind: old.kind,
      environment: old.environment,
      scopes: old.scopes,
      ipAllowlist: old.ip_allowlist,
    });
    await trx
      .updateTable('api_keys')
      .set({ status: 'rotated', replaced_by: successor.id, updated_at: sql<Date>`now()` })
      .where('id', '=', keyId)
      .execute();
    return successor;
  });
}
