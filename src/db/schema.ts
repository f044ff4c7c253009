import type { ColumnType, Generated } from 'kysely';

export type Environment = 'test' | 'live';
export type KeyKind = 'secret' | 'publishable';
export type KeyStatus = 'active' | 'suspended' | 'revoked' | 'rotated';

/** A timestamp column the database fills unless told otherwise. */
type CreatedAt = ColumnType<Date, Date | undefined, Date>;

export interface BusinessesTable {
  id: string;
  name: string;
  live_approved: Generated<boolean>;
  api_enabled: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface ShopsTable {
  id: string;
  business_id: string;
  environment: Environment;
  name: string;
  created_at: CreatedAt;
}

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
}

export interface PlatformSettingsTable {
  name: string;
  value: ColumnType<unknown, string, string>;
  updated_at: CreatedAt;
}

export interface FeePlansTable {
  business_id: string;
  provider_bps: Generated<number>;
  payer_fee: Generated<number>;
  tof_bps: Generated<number>;
  tte_bps: Generated<number>;
  updated_at: CreatedAt;
}

export interface IdempotencyKeysTable {
  id: Generated<number>;
  business_id: string;
  environment: Environment;
  idempotency_key: string;
  fingerprint: string;
  state: 'running' | 'done';
  lock_token: string | null;
  locked_at: Date | null;
  response_status: number | null;
  response_body: string | null;
  created_at: CreatedAt;
}

export interface PeriodicTasksTable {
  name: string;
  next_run_at: CreatedAt;
  last_run_at: Date | null;
  last_error: string | null;
}

export interface DB {
  businesses: BusinessesTable;
  shops: ShopsTable;
  api_keys: ApiKeysTable;
  platform_settings: PlatformSettingsTable;
  fee_plans: FeePlansTable;
  idempotency_keys: IdempotencyKeysTable;
  periodic_tasks: PeriodicTasksTable;
}
