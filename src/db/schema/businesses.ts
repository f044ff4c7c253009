import type { Generated } from 'kysely';
import type { CreatedAt, Environment } from './columns.js';

export interface BusinessesTable {
  id: string;
  name: string;
  live_approved: Generated<boolean>;
  /**
   * The name payers see, as the operator verified it at live approval (migration 040); set by the
   * operator only, never by a merchant's rename. Null until approved live.
   */
  verified_name: Generated<string | null>;
  api_enabled: Generated<boolean>;
  /** When the business asked for live access from its dashboard (migration 031); null: never. */
  live_requested_at: Generated<Date | null>;
  /** The shop's contact on its customers' order pages (migration 032); each may be null. */
  contact_phone: Generated<string | null>;
  contact_email: Generated<string | null>;
  pickup_address: Generated<string | null>;
  delivers: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface ShopsTable {
  id: string;
  business_id: string;
  environment: Environment;
  /** What the storefront and order pages show: the business's name, kept in step by its renames... */
  name: string;
  /** ...unless the business gave its shop a name of its own in Settings (migration 055). */
  own_name: Generated<boolean>;
  created_at: CreatedAt;
}
