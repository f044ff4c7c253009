import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { PASSWORD_COST_EXPONENT } from '../../config.js';

/**
 * Dashboard passwords: scrypt from Node's own crypto (no native package to build), its cost
 * parameters stored with each hash as `scrypt$N$r$p$salt$hash` (base64), so the cost can rise
 * later while old hashes still verify. New hashes use N = 2^costExponent, r = 8, p = 1.
 */
const KEY_BYTES = 32;
const SALT_BYTES = 16;
const MAX_COST_EXPONENT = 20;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 200;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string, costExponent = PASSWORD_COST_EXPONENT): Promise<string> {
  const cost = { N: 2 ** costExponent, r: 8, p: 1 };
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Whether `password` matches `stored`; a malformed stored hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash, ...rest] = stored.split('$');
  if (scheme !== 'scrypt' || rest.length > 0 || !salt || !hash) return false;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  const validCost =
    Number.isInteger(Math.log2(cost.N)) &&
    Math.log2(cost.N) <= MAX_COST_EXPONENT &&
    [cost.r, cost.p].every((value) => Number.isInteger(value) && value >= 1 && value <= 32);
  if (!validCost) return false;
  const expected = Buffer.from(hash, 'base64');
  if (expected.length !== KEY_BYTES) return false;
  const actual = await derive(password, Buffer.from(salt, 'base64'), cost);
  return timingSafeEqual(actual, expected);
}

/**
 * A hash of nothing anyone knows, at the cost new hashes get: unknown emails are checked against
 * it, so they take as long.
 */
const decoys = new Map<number, Promise<string>>();
export function decoyHash(costExponent = PASSWORD_COST_EXPONENT): Promise<string> {
  let decoy = decoys.get(costExponent);
  if (!decoy) {
    decoy = hashPassword(randomBytes(24).toString('base64'), costExponent);
    decoys.set(costExponent, decoy);
  }
  return decoy;
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH) return `must have at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `must have at most ${PASSWORD_MAX_LENGTH} characters`;
  return undefined;
}
