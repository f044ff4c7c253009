import type { ColumnType } from 'kysely';
import type { CreatedAt, Environment, Json } from './columns.js';

/** Who did an audited act (migration 050): a dashboard user, an API key, the operator, or the platform's tasks. */
export const AUDIT_ACTOR_KINDS = ['user', 'api_key', 'operator', 'system'] as const;

export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

/** An audit entry's free details: names and values that say what changed (never a secret). */
export type AuditDetails = Record<string, string | number | boolean | null | readonly string[]>;

export interface AuditLogTable {
  /** Written once by the database: the order entries were recorded in. */
  seq: ColumnType<string, never, never>;
  id: string;
  business_id: string;
  environment: Environment | null;
  action: string;
  actor_kind: AuditActorKind;
  actor_id: string | null;
  actor_label: string | null;
  ip: string | null;
  user_agent: string | null;
  target_kind: string | null;
  target_id: string | null;
  details: Json<AuditDetails>;
  created_at: CreatedAt;
}
