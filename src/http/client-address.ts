import { isIPv4, isIPv6 } from 'node:net';

/** The eight hextets of an IPv6 address, `::` expanded and a trailing dotted IPv4 part turned into two. */
function hextets(address: string): string[] {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => '0');
  return [...left, ...zeros, ...right].map((part) => parseInt(part, 16).toString(16));
}

/**
 * Who a per-address rate limit counts: an IPv4 address as it is, an IPv6 address by its /64 (the
 * first four hextets, normalized: one home or one server is given a whole /64, so counting each
 * address on its own would give it 2^64 allowances), and an IPv4-mapped IPv6 address
 * (`::ffff:1.2.3.4`) as the IPv4 address it maps. Every per-address limit builds its subject here.
 */
export function addressSubject(ip: string): string {
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return ip;
  const parts = hextets(ip);
  if (parts.slice(0, 5).every((part) => part === '0') && parts[5] === 'ffff') {
    const [high, low] = [parseInt(parts[6]!, 16), parseInt(parts[7]!, 16)];
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return `${parts.slice(0, 4).join(':')}::/64`;
}
