import { sql, type Kysely, type Selectable } from 'kysely';
import type { AuditLogTable, DB, Environment } from '../../db/schema.js';
import type { AuditAction } from './actions.js';

/**
 * Reading the audit log (decision 085): a business's entries of one mode and those of no mode
 * (the team, settings, the operator's acts), newest first by `seq`, the order they were written in.
 * Nothing here or anywhere writes an entry but `recordAudit`, and nothing edits or deletes one.
 */

export type AuditRow = Selectable<AuditLogTable>;

/** Who an entry's actor filter names: a user's or key's id, or every act of the operator or the platform. */
export const ACTOR_KINDS_BY_NAME = ['operator', 'system'] as const;

export interface AuditFilters {
  businessId: string;
  environment: Environment;
  actor?: string | undefined;
  action?: AuditAction | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

function filtered(db: Kysely<DB>, filters: AuditFilters) {
  let query = db
    .selectFrom('audit_log')
    .where('business_id', '=', filters.businessId)
    .where((eb) => eb.or([eb('environment', '=', filters.environment), eb('environment', 'is', null)]));
  const { actor, action, from, to } = filters;
  if (actor === 'operator' || actor === 'system') query = query.where('actor_kind', '=', actor);
  else if (actor !== undefined) query = query.where('actor_id', '=', actor);
  if (action !== undefined) query = query.where('action', '=', action);
  if (from !== undefined) query = query.where('created_at', '>=', from);
  if (to !== undefined) query = query.where('created_at', '<=', to);
  return query;
}

export async function listAuditEntries(
  db: Kysely<DB>,
  filters: AuditFilters,
  window: { limit: number; offset: number },
): Promise<{ items: AuditRow[]; total: number }> {
  const query = filtered(db, filters);
  const [items, count] = await Promise.all([
    query.selectAll().orderBy('seq', 'desc').limit(window.limit).offset(window.offset).execute(),
    query.select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.n) };
}

/** The actors who have entries in a business's log (the Activity page's member filter), most recent first. */
export async function auditActors(
  db: Kysely<DB>,
  businessId: string,
): Promise<{ kind: AuditRow['actor_kind']; id: string | null; label: string | null }[]> {
  const rows = await db
    .selectFrom('audit_log')
    .select(['actor_kind', 'actor_id'])
    .select(sql<string | null>`max(actor_label)`.as('label'))
    .select(sql<string>`max(seq)`.as('last'))
    .where('business_id', '=', businessId)
    .groupBy(['actor_kind', 'actor_id'])
    .orderBy('last', 'desc')
    .limit(100)
    .execute();
  return rows.map((row) => ({ kind: row.actor_kind, id: row.actor_id, label: row.label }));
}
