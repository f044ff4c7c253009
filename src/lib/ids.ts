import { randomBytes, randomFillSync, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes drawn 4 KiB at a time: a payment makes several ids, and a draw of its own for each
// cost more than the rest of making it. Each byte is used once.
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomByte(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++]!;
}

/**
 * Uniformly random base62 text (rejection sampling keeps every character equally likely), from the
 * shared pool: for ids and codes that are public once made. A secret comes from `secretBase62`.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
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

/**
 * The lowest id `newId(prefix)` can make at `at`: every id it made before sorts below it, so an
 * index on such an id finds the rows made before a time without an index of its own.
 */
export function firstIdAt(prefix: string, at: Date): string {
  return `${prefix}_${Math.max(0, at.getTime()).toString(36).padStart(10, '0')}`;
}

/**
 * Secret base62 text (API keys, customer links, form tokens), drawn from the system's generator
 * for each call: never from the shared pool, whose bytes wait in memory before they are used.
 */
export function secretBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length + 8)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}
