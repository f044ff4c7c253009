import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Environment } from './columns.js';

export interface WalletsTable {
  id: string;
  environment: Environment;
  phone: string;
  pin_hash: string;
  status: ColumnType<'active' | 'locked', 'active' | 'locked' | undefined, 'active' | 'locked'>;
  failed_pin_attempts: Generated<number>;
  locked_until: Date | null;
  /** When the last PIN attempt was taken (migration 028): older than the lock window, the count is zero. */
  last_pin_attempt_at: Generated<Date | null>;
  created_at: CreatedAt;
}

/** Wrong PINs for phones without a wallet, counted like a wallet's (migration 015). */
export interface UnknownPhonePinAttemptsTable {
  environment: Environment;
  phone: string;
  failed_pin_attempts: number;
  locked_until: Date | null;
  /** Migration 028: older than the lock window, the count is zero and the cleanup deletes the row. */
  last_attempt_at: Generated<Date>;
}
