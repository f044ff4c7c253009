import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Environment } from './columns.js';

export interface PlatformSettingsTable {
  name: string;
  value: ColumnType<unknown, string, string>;
  updated_at: CreatedAt;
}

export interface IdempotencyKeysTable {
  id: Generated<number>;
  business_id: string;
  environment: Environment;
  idempotency_key: string;
  fingerprint: string;
  state: 'running' | 'done';
  response_status: number | null;
  response_body: string | null;
  created_at: CreatedAt;
}

export interface PeriodicTasksTable {
  name: string;
  next_run_at: CreatedAt;
  last_run_at: Date | null;
  last_error: string | null;
  /** The worker running the task now, until `locked_until` (renewed while it runs). */
  locked_by: string | null;
  locked_until: Date | null;
}
