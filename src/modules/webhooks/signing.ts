import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** decisions.md: the `X-Service-*` headers of api.md 6.1 carry the brand name "Commerce". */
export const SIGNATURE_HEADER = 'X-Commerce-Signature';
export const TIMESTAMP_HEADER = 'X-Commerce-Timestamp';
export const EVENT_HEADER = 'X-Commerce-Event';
export const DELIVERY_HEADER = 'X-Commerce-Delivery';

/** Standard Webhooks (standardwebhooks.com) headers, for endpoints with `signatureScheme: "standard"`. */
export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';
const STANDARD_SECRET_PREFIX = 'whsec_';

export type SignatureScheme = 'commerce' | 'standard';

/**
 * A new signing secret in the scheme's format: 64 hex characters (32 random bytes) for
 * `commerce` (api.md 2.4), `whsec_` + base64 of 32 random bytes for `standard`.
 */
export function newEndpointSecret(scheme: SignatureScheme = 'commerce'): string {
  const bytes = randomBytes(32);
  return scheme === 'standard' ? `${STANDARD_SECRET_PREFIX}${bytes.toString('base64')}` : bytes.toString('hex');
}

/** api.md 6.3: HMAC-SHA256 over `<timestamp>.<raw body>`, lowercase hex. */
export function sign(secret: string, timestamp: number | string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/** The signature header: one `sha256=` entry per secret in use (two during a rotation). */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return secrets.map((secret) => `sha256=${sign(secret, timestamp, body)}`).join(',');
}

/** Standard Webhooks: base64 HMAC-SHA256, keyed with the secret's decoded bytes, over `<id>.<timestamp>.<body>`. */
export function signStandard(secret: string, messageId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(STANDARD_SECRET_PREFIX.length), 'base64');
  return createHmac('sha256', key).update(`${messageId}.${timestamp}.`).update(body).digest('base64');
}

/** The `webhook-signature` header: one `v1,<signature>` per secret in use, space separated. */
export function standardSignatureHeader(
  secrets: readonly string[],
  messageId: string,
  timestamp: number,
  body: string,
): string {
  return secrets.map((secret) => `v1,${signStandard(secret, messageId, timestamp, body)}`).join(' ');
}

export class WebhookVerificationError extends Error {}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const value = bag[name] ?? bag[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * For receivers (it will move into the SDK): checks the signature of a delivery against the raw
 * body as received, in constant time, and refuses timestamps further than `toleranceSeconds` from
 * now (replay protection). Returns the parsed event; throws WebhookVerificationError otherwise.
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  headers: HeaderBag,
  secret: string,
  { toleranceSeconds = 300, now = Date.now() }: { toleranceSeconds?: number; now?: number } = {},
): unknown {
  const timestamp = header(headers, TIMESTAMP_HEADER);
  const signatures = header(headers, SIGNATURE_HEADER);
  if (!timestamp || !/^\d+$/.test(timestamp)) throw new WebhookVerificationError('missing or malformed timestamp');
  if (!signatures) throw new WebhookVerificationError('missing signature');
  if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) {
    throw new WebhookVerificationError('timestamp outside the tolerance');
  }
  const expected = Buffer.from(sign(secret, timestamp, rawBody), 'hex');
  const matches = signatures.split(',').some((entry) => {
    const match = /^sha256=([0-9a-f]{64})$/.exec(entry.trim());
    return match !== null && timingSafeEqual(Buffer.from(match[1]!, 'hex'), expected);
  });
  if (!matches) throw new WebhookVerificationError('signature mismatch');
  return JSON.parse(rawBody.toString());
}
