/**
 * Webhook verification on its own: `@commerce-developer-api/sdk/webhooks` loads this module and the error
 * classes only, not the HTTP client, for a receiver that never calls the API.
 */
import { WebhookVerificationError } from './errors.js';
import type { webhooks } from './generated/openapi.js';

export { CommerceError, WebhookVerificationError } from './errors.js';
export type { WebhookVerificationCode, WebhookVerificationReason } from './errors.js';

/** Every event a webhook endpoint can receive: a union discriminated on `event`. */
export type WebhookEvent = {
  [Name in keyof webhooks]: webhooks[Name] extends {
    post: { requestBody?: { content: { 'application/json': infer Body } } };
  }
    ? Body
    : never;
}[keyof webhooks];
export type WebhookEventName = WebhookEvent['event'];
export type WebhookEventOf<Name extends WebhookEventName> = Extract<WebhookEvent, { event: Name }>;

export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Refuse timestamps further than this from now (replay protection). Default 300. */
  toleranceSeconds?: number;
  /** The current time in milliseconds (tests). */
  now?: number;
}

const encoder = new TextEncoder();

function headerOf(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}

function bytesOf(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? encoder.encode(body) : body;
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

async function hmacKey(secret: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

/**
 * Checks a delivery and returns its event. Web Crypto's `verify` compares in constant time. Both
 * schemes of the API: `X-Commerce-Signature` (`sha256=<hex>`, two during a secret rotation) and
 * Standard Webhooks (`webhook-signature`, for endpoints created with `signatureScheme: "standard"`).
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: HeaderBag,
  secret: string,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new WebhookVerificationError('INVALID_SECRET', 'No webhook secret given: pass the endpoint secret.');
  }
  const body = bytesOf(rawBody);
  const standard = headerOf(headers, 'webhook-signature');
  const signatures = standard ?? headerOf(headers, 'X-Commerce-Signature');
  if (!signatures) {
    throw new WebhookVerificationError(
      'NO_SIGNATURE_HEADER',
      'No X-Commerce-Signature (or webhook-signature) header: this request was not signed by the API.',
    );
  }
  const timestamp = standard ? headerOf(headers, 'webhook-timestamp') : headerOf(headers, 'X-Commerce-Timestamp');
  if (!timestamp) throw new WebhookVerificationError('NO_TIMESTAMP_HEADER', 'No timestamp header.');
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError(
      'MALFORMED_TIMESTAMP',
      `The timestamp header "${timestamp}" is not Unix seconds.`,
    );
  }
  const tolerance = options.toleranceSeconds ?? 300;
  const ageSeconds = Math.round((options.now ?? Date.now()) / 1000 - Number(timestamp));
  if (Math.abs(ageSeconds) > tolerance) {
    throw new WebhookVerificationError(
      'TIMESTAMP_OUTSIDE_TOLERANCE',
      `The timestamp is ${Math.abs(ageSeconds)} s ${ageSeconds >= 0 ? 'old' : 'in the future'}, beyond the tolerance of ${tolerance} s (a replay, or a wrong clock).`,
    );
  }

  let matched = false;
  if (standard) {
    const id = headerOf(headers, 'webhook-id') ?? '';
    const key = await hmacKey(fromBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret));
    const signed = concat(encoder.encode(`${id}.${timestamp}.`), body);
    for (const entry of standard.split(' ')) {
      const [version, value] = entry.split(',');
      if (version !== 'v1' || !value) continue;
      if (await crypto.subtle.verify('HMAC', key, fromBase64(value), signed)) matched = true;
    }
  } else {
    const key = await hmacKey(encoder.encode(secret));
    const signed = concat(encoder.encode(`${timestamp}.`), body);
    for (const entry of signatures.split(',')) {
      const match = /^sha256=([0-9a-f]{64})$/.exec(entry.trim());
      if (match && (await crypto.subtle.verify('HMAC', key, fromHex(match[1]!), signed))) matched = true;
    }
  }
  if (!matched) {
    throw new WebhookVerificationError(
      'NO_MATCHING_SIGNATURE',
      'No signature matches this secret and body: check the endpoint secret, and verify the raw body exactly as received (not re-serialized JSON).',
    );
  }
  try {
    return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'The signed body is not JSON.');
  }
}

/** Signs a body as the API does (`X-Commerce-Signature`): for `commerce listen` and receivers' tests. */
export async function signPayload(secret: string, timestamp: number, rawBody: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const signature = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(`${timestamp}.${rawBody}`)));
  return `sha256=${[...signature].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}
