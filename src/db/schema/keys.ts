import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Environment } from './columns.js';

export type KeyKind = 'secret' | 'publishable';
export type KeyStatus = 'active' | 'suspended' | 'revoked' | 'rotated';

export interface ApiKeysTable {
  id: string;
  business_id: string;
  kind: KeyKind;
  environment: Environment;
  key_hash: string;
  key_hint: string;
  scopes: string[];
  ip_allowlist: ColumnType<string[], string[] | undefined, string[]>;
  status: ColumnType<KeyStatus, KeyStatus | undefined, KeyStatus>;
  replaced_by: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
  last_used_at: Generated<Date | null>;
}
