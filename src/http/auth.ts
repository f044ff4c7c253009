import { timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashKey, isWellFormedKey } from '../modules/keys/key-text.js';
import { keyExpired } from '../modules/keys/expiry.js';
import type { KeyRecord } from '../modules/keys/key-cache.js';
import { ApiError } from './errors.js';

/**
 * Fastify's `trustProxy` for the TRUST_PROXY setting. Fastify 5 no longer honours a bare hop
 * count (a direct client could then spoof the header), so a count becomes the function it used to
 * be: the socket peer and the next N-1 addresses leftwards are proxies, the one after is the
 * client. Use a count only when every request reaches the API through those proxies.
 */
export function trustProxyOption(
  setting: false | number | string[],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return setting > 0 ? (_address, hop) => hop < setting : false;
  return setting;
}

const AUTH_HEADER = /^Bearer ([^\s]+)$/i;

/** A token or secret compared in constant time; nothing expected never matches. */
export function sameToken(given: unknown, expected: string | undefined): boolean {
  if (typeof given !== 'string' || !expected) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token of a `Bearer` Authorization header, or '' when there is none. */
export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization ?? '';
  return header.startsWith('Bearer ') ? header.slice(7) : '';
}

function normalizeIp(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

const allowlists = new WeakMap<KeyRecord, BlockList>();

/** Entries are single addresses or CIDR ranges, IPv4 or IPv6. */
function allowlistOf(record: KeyRecord): BlockList {
  let list = allowlists.get(record);
  if (!list) {
    list = new BlockList();
    for (const entry of record.ipAllowlist) {
      const [address = '', bits] = entry.split('/');
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) list.addAddress(address, family);
      else list.addSubnet(address, Number(bits), family);
    }
    allowlists.set(record, list);
  }
  return list;
}

export function ipAllowed(record: KeyRecord, ip: string): boolean {
  if (record.ipAllowlist.length === 0) return true;
  const address = normalizeIp(ip);
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return allowlistOf(record).check(address, family);
}

/**
 * The one authentication hook. Order of checks (decisions.md): header → key (known, not expired) → FEATURE_DISABLED
 * → key active → live approval → IP allowlist → secret vs publishable → sandbox-only → scope →
 * rate limit. It runs before the body is parsed, so a refused key never learns about its body.
 */
export async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const routeConfig = request.routeOptions.config;
  // API answers (a new key, a webhook secret, balances) are never stored by a browser or proxy.
  if (request.url.startsWith('/api/')) reply.header('Cache-Control', 'no-store');
  const mode = routeConfig.auth ?? 'none';
  if (mode === 'none') return;
  if (mode === 'admin') {
    if (!sameToken(bearerToken(request), request.server.services.adminToken)) throw new ApiError('ADMIN_UNAUTHORIZED');
    request.operator = true;
    return;
  }
  const { keyCache, rateLimiter, config } = request.server.services;

  const header = request.headers.authorization;
  if (header === undefined || header === '') throw new ApiError('MISSING_CREDENTIALS');
  const match = AUTH_HEADER.exec(header);
  if (!match?.[1]) throw new ApiError('INVALID_AUTH_HEADER');
  const keyText = match[1];
  if (!isWellFormedKey(keyText)) throw new ApiError('INVALID_API_KEY');

  const record = await keyCache.get(hashKey(keyText));
  // A key past its expiry (a rolled key after its overlap) is no key at all (decision 084).
  if (!record || keyExpired(record, Date.now())) throw new ApiError('INVALID_API_KEY');
  if (!record.globalApiEnabled || !record.businessApiEnabled) throw new ApiError('FEATURE_DISABLED');
  // A rolled key works until its expiry, as the key it was.
  if (record.status !== 'active' && record.status !== 'rotated') throw new ApiError('API_ACCESS_NOT_ACTIVE');
  if (record.environment === 'live' && !record.businessLiveApproved) throw new ApiError('LIVE_ACCESS_NOT_APPROVED');
  if (!ipAllowed(record, request.ip)) throw new ApiError('IP_NOT_ALLOWED');
  if (mode === 'secret' && record.kind !== 'secret') throw new ApiError('SECRET_KEY_REQUIRED');
  if (routeConfig.sandboxOnly && record.environment !== 'test') throw new ApiError('SANDBOX_ONLY');
  if (routeConfig.scope && !record.scopes.includes(routeConfig.scope)) {
    throw new ApiError('SCOPE_REQUIRED', `This API key lacks the scope "${routeConfig.scope}".`);
  }

  request.auth = {
    keyId: record.id,
    keyHint: record.hint,
    businessId: record.businessId,
    environment: record.environment,
    kind: record.kind,
    scopes: record.scopes,
    sandbox: record.environment === 'test',
  };

  keyCache.markUsed(record.id, request.ip);
  const limit = config.rateLimitPerMinute[record.environment];
  const decision = await rateLimiter.hit(record.id, limit);
  reply.header('X-RateLimit-Limit', String(decision.limit));
  reply.header('X-RateLimit-Remaining', String(decision.remaining));
  reply.header('X-RateLimit-Reset', String(decision.resetSeconds));
  if (!decision.allowed) {
    throw new ApiError('RATE_LIMITED', undefined, undefined, { 'Retry-After': String(decision.resetSeconds) });
  }
}
