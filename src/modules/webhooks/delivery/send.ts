import { allowsPrivate } from '../endpoints.js';
import { postWebhook } from '../sender.js';
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signatureHeader,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  standardSignatureHeader,
  TIMESTAMP_HEADER,
} from '../signing.js';
import type { ClaimedDelivery } from './claim.js';
import type { Outcome } from './record-outcomes.js';

/** The headers of one attempt, signed with every secret in use (two during a rotation). */
function headersFor(delivery: ClaimedDelivery, secrets: string[], timestamp: number): Record<string, string> {
  const common = {
    'Content-Type': 'application/json',
    'User-Agent': 'Commerce-Webhooks/1',
  };
  switch (delivery.signature_scheme) {
    case 'commerce':
      return {
        ...common,
        [SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, delivery.body),
        [TIMESTAMP_HEADER]: String(timestamp),
        [EVENT_HEADER]: delivery.event,
        [DELIVERY_HEADER]: delivery.id,
      };
    case 'standard':
      // webhook-id is the event id: the same on every attempt, what receivers deduplicate on.
      return {
        ...common,
        [STANDARD_ID_HEADER]: delivery.event_id,
        [STANDARD_TIMESTAMP_HEADER]: String(timestamp),
        [STANDARD_SIGNATURE_HEADER]: standardSignatureHeader(secrets, delivery.event_id, timestamp, delivery.body),
        [EVENT_HEADER]: delivery.event,
        [DELIVERY_HEADER]: delivery.id,
      };
    default: {
      const unknown: never = delivery.signature_scheme;
      throw new Error(`unknown signature scheme ${String(unknown)}`);
    }
  }
}

/** One attempt: the signed request and what came back, never a throw for the receiver's failures. */
export async function sendDelivery(
  delivery: ClaimedDelivery,
  options: { timeoutMs: number; connectTimeoutMs: number; webhookAllowPrivate: boolean },
): Promise<Outcome> {
  const started = Date.now();
  const timestamp = Math.floor(started / 1000);
  const secrets = [delivery.secret];
  if (
    delivery.previous_secret &&
    delivery.previous_secret_expires_at &&
    delivery.previous_secret_expires_at.getTime() > started
  ) {
    secrets.push(delivery.previous_secret);
  }
  const result = await postWebhook(delivery.url, delivery.body, headersFor(delivery, secrets, timestamp), {
    timeoutMs: options.timeoutMs,
    connectTimeoutMs: options.connectTimeoutMs,
    allowPrivate: allowsPrivate(delivery.environment, options.webhookAllowPrivate),
  });
  return { delivery, result, durationMs: Date.now() - started };
}
