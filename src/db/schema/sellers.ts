import type { Environment, Json } from './columns.js';

/** Every status of a seller: the one list the table type, schemas and filters derive from (the migration's CHECK repeats it). */
export const SELLER_STATUSES = ['ACTIVE', 'DISABLED'] as const;

export type SellerStatus = (typeof SELLER_STATUSES)[number];

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
}
