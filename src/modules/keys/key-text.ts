import { createHash } from 'node:crypto';
import type { Environment, KeyKind } from '../../db/schema.js';
import { secretBase62 } from '../../lib/ids.js';

const KEY_PATTERN = /^(sk|pk)_(test|live)_[0-9A-Za-z]{32,128}$/;

export function generateKeyText(kind: KeyKind, environment: Environment): string {
  return `${kind === 'secret' ? 'sk' : 'pk'}_${environment}_${secretBase62(40)}`;
}

export function isWellFormedKey(text: string): boolean {
  return KEY_PATTERN.test(text);
}

/** Keys are 238 bits of randomness, so a fast hash is enough; only the hash is stored. */
export function hashKey(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** What an operator sees of a key after creation: its prefix and last four characters. */
export function keyHint(text: string): string {
  const prefix = text.slice(0, text.indexOf('_', 3) + 1);
  return `${prefix}...${text.slice(-4)}`;
}
