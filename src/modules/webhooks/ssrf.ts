import { lookup } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may never reach: private, loopback, link-local (cloud metadata at
 * 169.254.169.254 and fd00:ec2::254 included), carrier-grade NAT, multicast and reserved ranges.
 */
const blocked = new BlockList();
for (const [network, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, bits, 'ipv4');
}
for (const [network, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
] as const) {
  blocked.addSubnet(network, bits, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return !blocked.check(mapped[1]!, 'ipv4');
    return !blocked.check(address, 'ipv6');
  }
  return !blocked.check(address, 'ipv4');
}

export class AddressNotAllowedError extends Error {}

/** Every address the host name resolves to (or the literal address itself). */
export function resolveAll(hostname: string): Promise<string[]> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return Promise.resolve([host]);
  return new Promise((resolve, reject) => {
    lookup(host, { all: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses.map((a) => a.address)),
    );
  });
}

type LookupCallback = (
  error: Error | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request that refuses private addresses. The check applies to the address
 * the socket then connects to, so a DNS answer cannot change between check and connect.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    lookup(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const refused = addresses.find((entry) => !allowPrivate && !isPublicAddress(entry.address));
      if (refused)
        return callback(
          new AddressNotAllowedError(`${hostname} resolves to ${refused.address}, a non-public address`),
          '',
        );
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`${hostname} did not resolve`), '');
      return callback(null, first.address, first.family);
    });
  };
}
