import assert from 'node:assert/strict';
import type { TestApp, TestResponse } from '../support/harness.js';
import { expectStatus } from '../support/harness.js';

export const INTENTS = '/api/v1/dev/intents';

export async function createIntent(t: TestApp, key: string, body: unknown = { amount: 5000 }): Promise<any> {
  const response = await t.request('POST', INTENTS, { key, body, idempotencyKey: true });
  expectStatus(response, 201);
  return response.body.data;
}

/** POST to an intent action with a fresh idempotency key. */
export function act(
  t: TestApp,
  key: string,
  reference: string,
  action: 'cancel' | 'refund' | 'simulate' | 'simulate-expiry',
  body: unknown = {},
): Promise<TestResponse> {
  return t.request('POST', `${INTENTS}/${reference}/${action}`, { key, body, idempotencyKey: true });
}

export interface StoredEvent {
  id: string;
  event: string;
  created_at: string;
  sandbox: boolean;
  data: Record<string, any>;
}

/** The events stored for one intent, oldest first, parsed from the exact body text. */
export async function eventsOf(t: TestApp, reference: string): Promise<StoredEvent[]> {
  const rows = await t.runtime.db
    .selectFrom('events')
    .selectAll()
    .where('subject', '=', reference)
    .orderBy('seq')
    .execute();
  return rows.map((row) => {
    const body = JSON.parse(row.body) as StoredEvent;
    assert.equal(body.id, row.id);
    assert.equal(body.event, row.event);
    return body;
  });
}

export async function eventNames(t: TestApp, reference: string): Promise<string[]> {
  return (await eventsOf(t, reference)).map((event) => event.event);
}

/** Moves an intent's expiry into the past, as if 24 hours had gone by. */
export async function ageIntent(t: TestApp, reference: string): Promise<void> {
  await t.runtime.db
    .updateTable('payment_intents')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('reference_number', '=', reference)
    .execute();
}
