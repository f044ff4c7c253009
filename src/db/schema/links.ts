import type { ColumnType, Generated } from 'kysely';
import type { Environment } from './columns.js';
import type { AmountType } from './intents.js';

/**
 * Every status of a payment link: the one list the schemas, filters and pages derive from. Only
 * `active` is stored; the rest follows from the counts and the clock (payment-links' `linkStatus`).
 */
export const PAYMENT_LINK_STATUSES = ['ACTIVE', 'INACTIVE', 'COMPLETED', 'EXPIRED'] as const;

export type PaymentLinkStatus = (typeof PAYMENT_LINK_STATUSES)[number];

export interface PaymentLinksTable {
  reference_number: string;
  slug: string;
  business_id: string;
  environment: Environment;
  label: string;
  amount_type: AmountType;
  amount: number | null;
  min_amount: number | null;
  max_amount: number | null;
  max_payments: number | null;
  expires_at: Date | null;
  collect_name: boolean;
  collect_note: boolean;
  success_url: string | null;
  metadata: ColumnType<Record<string, string>, string, string>;
  active: Generated<boolean>;
  inactive_message: string | null;
  payments_count: Generated<number>;
  amount_collected: Generated<number>;
  created_at: Date;
  updated_at: Date;
}
