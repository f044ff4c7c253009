import type { KeyListStatus, KeyStatus } from '../../db/schema.js';

/**
 * Whether a key no longer authenticates because of the clock (decision 084): past its
 * `expires_at`, or rotated before rolls had an overlap (a `rotated` key with no expiry).
 * Such a key answers INVALID_API_KEY, as an unknown key does.
 */
export function keyExpired(key: { status: KeyStatus; expiresAt: Date | null }, now: number): boolean {
  if (key.expiresAt !== null) return key.expiresAt.getTime() <= now;
  return key.status === 'rotated';
}

/**
 * What a listing says of a key: `expired` for an active key past its expiry, else its stored
 * status. A rolled key stays `rotated` (its `expiresAt` says until when it worked or works).
 */
export function listStatus(key: { status: KeyStatus; expiresAt: Date | null }, now: number): KeyListStatus {
  return key.status === 'active' && keyExpired(key, now) ? 'expired' : key.status;
}
