/**
 * What a test needs to know but does not test (the events of an object), read through the API
 * with the business's key, as an integrator reads it: a test that checks storage itself (ledger
 * rows, locks, idempotency records) queries its tables instead.
 */
import assert from 'node:assert/strict';
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

/** An event's body as webhook endpoints receive it. */
export interface DeliveredEvent {
  id: string;
  event: string;
  sandbox: boolean;
  data: Record<string, any>;
  /** The envelope's other fields as each family writes them (`created_at` or `timestamp`, `sequence`). */
  [field: string]: unknown;
}

/**
 * The events of one object (an intent, order or payout reference, a product id) in the object's own
 * order, its `sequence`, as a receiver orders them: the list's order is the order in which
 * transactions took their ids, which concurrent changes of one object can invert.
 */
export async function listEvents(t: TestApp, key: string, object: string, type?: string): Promise<ApiEvent[]> {
  const newestFirst: ApiEvent[] = [];
  for (let page = 1; ; page += 1) {
    const query = new URLSearchParams({ object, limit: '100', page: String(page), ...(type ? { type } : {}) });
    const response = await t.request('GET', `/api/v1/dev/events?${query}`, { key });
    expectStatus(response, 200);
    newestFirst.push(...(response.body.data.items as ApiEvent[]));
    if (!response.body.data.hasMore) break;
  }
  return newestFirst.reverse().sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
}

/** The id of the one event `type` of an object. */
export async function eventIdOf(t: TestApp, key: string, object: string, type?: string): Promise<string> {
  const [event, ...more] = await listEvents(t, key, object, type);
  if (!event || more.length > 0)
    throw new Error(`expected one ${type ?? 'event'} of ${object}, got ${more.length + (event ? 1 : 0)}`);
  return event.id;
}

/**
 * The events of one object as delivered, oldest first: `key` must be of the object's environment
 * (the Events API answers only its own).
 */
export async function eventsOf(t: TestApp, key: string, object: string): Promise<DeliveredEvent[]> {
  return (await listEvents(t, key, object)).map((event) => {
    const body = event.payload as DeliveredEvent;
    assert.equal(body.id, event.id);
    assert.equal(body.event, event.type);
    return body;
  });
}

/** The names of an object's events, oldest first. */
export async function eventNames(t: TestApp, key: string, object: string): Promise<string[]> {
  return (await eventsOf(t, key, object)).map((event) => event.event);
}
