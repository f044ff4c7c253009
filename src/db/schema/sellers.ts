import type { ColumnType } from 'kysely';
import type { Environment, Json } from './columns.js';

/** Every status of a seller: the one list the table type, schemas and filters derive from (the migration's CHECK repeats it). */
export const SELLER_STATUSES = ['ACTIVE', 'DISABLED'] as const;

export type SellerStatus = (typeof SELLER_STATUSES)[number];

/**
 * A seller's id (`SL-` and 16 digits) as a request may name it, for the modules below sellers
 * (payments' `?seller=`); above, sellers/schemas.ts `SellerId` says the same.
 */
export const SELLER_ID_PATTERN = '^SL-[0-9]{16}$';

/**
 * When a seller is paid out (migration 048): MANUAL, by the merchant's `POST /payouts`; DAILY, by
 * the worker once a UTC day (payouts/daily.ts). The one list the table type and schemas derive from.
 */
export const SELLER_PAYOUT_SCHEDULES = ['MANUAL', 'DAILY'] as const;

export type SellerPayoutSchedule = (typeof SELLER_PAYOUT_SCHEDULES)[number];

export interface SellersTable {
  id: string;
  business_id: string;
  environment: Environment;
  name: string;
  phone: string;
  commission_bps: number;
  status: SellerStatus;
  metadata: Json<Record<string, string>>;
  created_at: Date;
  updated_at: Date;
  payout_schedule: SellerPayoutSchedule;
}

/** A seller's UTC day as the daily payout task took it (migration 048): its payout, or null when skipped. */
export interface SellerPayoutDaysTable {
  seller_id: string;
  /** 'YYYY-MM-DD' when written; read it as text (`day::text`): the drivers return a date differently. */
  day: ColumnType<string, string, never>;
  payout_reference: string | null;
  created_at: Date;
}

/** Who bears a split payment's provider fee (decision 080): the one list the schemas derive from. */
export const FEE_BEARERS = ['BUSINESS', 'PROPORTIONAL'] as const;

export type FeeBearer = (typeof FEE_BEARERS)[number];

/** One line of a split as the merchant asked for it: a fixed amount or a rate of the amount paid. */
export type SplitLineRecord = { seller: string; amount: number } | { seller: string; bps: number };

/** A split as an intent keeps it (migration 045, `payment_intents.split`). */
export interface SplitRecord {
  fee_bearer: FeeBearer;
  lines: SplitLineRecord[];
}

/** What a payment gave one seller (`payment_intents.split_shares`): its gross, its part of the provider fee, its net. */
export interface SplitShareRecord {
  seller: string;
  gross: number;
  fee: number;
  net: number;
}
