/**
 * What a test needs to know but does not test (the events of an object), read through the API
 * with the business's key, as an integrator reads it: a test that checks storage itself (ledger
 * rows, locks, idempotency records) queries its tables instead.
 */
import { expectStatus, type TestApp } from './harness.js';

/** One event as the Events API answers it. */
export interface ApiEvent {
  id: string;
  type: string;
  object: string;
  sequence: number | null;
  sandbox: boolean;
  createdAt: string;
  /** The event exactly as delivered to webhook endpoints. */
  payload: Record<string, any>;
}

/** The events of one object (an intent, order or payout reference, a product id), oldest first. */
export async function listEvents(t: TestApp, key: string, object: string, type?: string): Promise<ApiEvent[]> {
  const query = new URLSearchParams({ object, limit: '100', ...(type ? { type } : {}) });
  const response = await t.request('GET', `/api/v1/dev/events?${query}`, { key });
  expectStatus(response, 200);
  return [...(response.body.data.items as ApiEvent[])].reverse();
}

/** The id of the one event `type` of an object. */
export async function eventIdOf(t: TestApp, key: string, object: string, type?: string): Promise<string> {
  const [event, ...more] = await listEvents(t, key, object, type);
  if (!event || more.length > 0)
    throw new Error(`expected one ${type ?? 'event'} of ${object}, got ${more.length + (event ? 1 : 0)}`);
  return event.id;
}
