import type { TestApp, TestResponse } from '../support/harness.js';
import { expectStatus } from '../support/harness.js';

export const INTENTS = '/api/v1/dev/intents';

export async function createIntent(t: TestApp, key: string, body: unknown = { amount: 5000 }): Promise<any> {
  const response = await t.request('POST', INTENTS, { key, body, idempotencyKey: true });
  expectStatus(response, 201);
  return response.body.data;
}

/** An intent as GET answers it; `key` of the intent's environment. */
export async function getIntent(t: TestApp, key: string, reference: string): Promise<any> {
  const response = await t.request('GET', `${INTENTS}/${reference}`, { key });
  expectStatus(response, 200);
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

/** Moves an intent's expiry into the past, as if 24 hours had gone by. */
export async function ageIntent(t: TestApp, reference: string): Promise<void> {
  await t.runtime.db
    .updateTable('payment_intents')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('reference_number', '=', reference)
    .execute();
}
