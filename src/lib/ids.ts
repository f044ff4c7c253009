import { randomBytes, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniformly random base62 text (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function randomDigits(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += String(randomInt(10));
  return out;
}

/**
 * Prefixed, time-sortable ids: prefix, 10 base36 characters of milliseconds, 14 random
 * characters. Sorting the text sorts by creation time.
 */
export function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36).padStart(10, '0')}${randomBase62(14)}`;
}
