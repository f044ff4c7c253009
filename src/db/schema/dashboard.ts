import type { ColumnType } from 'kysely';
import type { Lang } from '../../lib/i18n.js';
import type { CreatedAt, Environment } from './columns.js';

/**
 * The roles of a business's team (issue 53, decision 083): the one list the table type, schemas,
 * forms and the permission table (src/modules/team/permissions.ts) derive from (migration 050's
 * CHECK repeats it).
 */
export const DASHBOARD_ROLES = ['owner', 'admin', 'developer', 'finance', 'support', 'viewer'] as const;

export type DashboardRole = (typeof DASHBOARD_ROLES)[number];
/** A dashboard session's language: any language the pages speak (migration 030 lets the column hold 'ar'). */
export type DashboardLang = Lang;

export interface DashboardUsersTable {
  id: string;
  business_id: string;
  email: string;
  password_hash: string;
  role: DashboardRole;
  disabled_at: Date | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface DashboardSessionsTable {
  token_hash: string;
  user_id: string;
  csrf_token: string;
  environment: ColumnType<Environment, Environment | undefined, Environment>;
  lang: ColumnType<DashboardLang, DashboardLang | undefined, DashboardLang>;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  revoked_at: Date | null;
}

/** An invitation to a business's team (migration 051): only its token's hash is kept. */
export interface DashboardInvitationsTable {
  id: string;
  business_id: string;
  email: string;
  role: DashboardRole;
  token_hash: string;
  /** The member who invited (null: the operator). */
  invited_by: string | null;
  created_at: CreatedAt;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}
