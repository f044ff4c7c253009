import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Environment } from './columns.js';

export type KeyKind = 'secret' | 'publishable';
export type KeyStatus = 'active' | 'suspended' | 'revoked' | 'rotated';

/**
 * What a key's listing says of it: its stored status, or `expired` once an active key's
 * `expires_at` has passed (the expiry it was made with). A rolled key stays `rotated`: its
 * `expires_at` ends its overlap. The one list the API's schema, the dashboard's words and the
 * tests derive from.
 */
export const KEY_LIST_STATUSES = ['active', 'suspended', 'revoked', 'rotated', 'expired'] as const;

export type KeyListStatus = (typeof KEY_LIST_STATUSES)[number];

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
  /** Migration 052: a name to tell keys apart, null for keys made before names. */
  name: Generated<string | null>;
  /** When the key stops working (a rolled key's overlap, or an expiry chosen at creation). */
  expires_at: Generated<Date | null>;
  last_used_ip: Generated<string | null>;
  /** When `api_key.expiring` was sent for the current `expires_at`. */
  expiring_sent_at: Generated<Date | null>;
}
