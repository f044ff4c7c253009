import { isIP } from 'node:net';

/** An IP allowlist entry: one IPv4 or IPv6 address, or a CIDR range. */
export function validAllowlistEntry(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  return /^\d+$/.test(bits) && n >= 0 && n <= (family === 4 ? 32 : 128);
}
