import { lookup } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The IPv4 addresses an IPv6 address carries, for the forms that reach IPv4 hosts: IPv4-mapped
 * and translated (::ffff:a.b.c.d, ::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002:aabb:ccdd::),
 * Teredo (server and obfuscated client) and the deprecated IPv4-compatible ::a.b.c.d.
 */
function embeddedIpv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4[] {
  const bytes = address.toByteArray();
  const at = (offset: number, mask = 0) => new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((b) => b ^ mask));
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
    case 'rfc6052':
      return [at(12)];
    case '6to4':
      return [at(2)];
    case 'teredo':
      return [at(4), at(12, 0xff)];
    default:
      return bytes.slice(0, 12).every((b) => b === 0) ? [at(12)] : [];
  }
}

/**
 * Only global unicast addresses pass (ipaddr.js ranges): private, loopback, link-local (cloud
 * metadata at 169.254.169.254 and fd00:ec2::254 included), carrier-grade NAT, multicast, reserved,
 * documentation and benchmarking ranges do not. An IPv6 form that carries an IPv4 address is
 * judged by that address; local-use NAT64 (64:ff9b:1::/48) never passes.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  const parts = v6.parts;
  if (range === 'rfc6052' && parts[2] !== 0) return false;
  const inner = embeddedIpv4(v6, range);
  if (inner.length > 0) return inner.every((v4) => v4.range() === 'unicast');
  // Global unicast is 2000::/3 (RFC 4291); ipaddr.js calls anything outside its table unicast.
  return range === 'unicast' && (parts[0]! & 0xe000) === 0x2000;
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
