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

/** What a listing says of a key: `expired` once the clock has retired it, else its stored status. */
export function listStatus(key: { status: KeyStatus; expiresAt: Date | null }, now: number): KeyListStatus {
  if (key.status === 'revoked' || key.status === 'suspended') return key.status;
  return key.expiresAt !== null && keyExpired(key, now) ? 'expired' : key.status;
}
