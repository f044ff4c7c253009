import type { Environment } from '../../src/db/schema.js';
import { endDueRequests } from '../../src/modules/requests/expiry.js';
import { answerRequest } from '../../src/modules/requests/service.js';
import { expectStatus, type TestApp, type TestResponse } from '../support/harness.js';

export const INTENTS = '/api/v1/dev/intents';
export const PAYMENT_REQUESTS = '/api/v1/dev/payment-requests';

/** An intent of the key's environment, through the API. */
export async function createIntent(t: TestApp, key: string, body: Record<string, unknown> = { amount: 5000 }) {
  const response = await t.request('POST', INTENTS, { key, body, idempotencyKey: true });
  expectStatus(response, 201);
  return response.body.data;
}

export async function getIntent(t: TestApp, key: string, reference: string) {
  const response = await t.request('GET', `${INTENTS}/${reference}`, { key });
  expectStatus(response, 200);
  return response.body.data;
}

/** POST a request for an intent, with a fresh idempotency key. */
export function askPayment(t: TestApp, key: string, reference: string, body: Record<string, unknown>) {
  return t.request('POST', `${INTENTS}/${reference}/requests`, { key, body, idempotencyKey: true });
}

/** A request that must be created (201): its view. */
export async function createRequest(t: TestApp, key: string, reference: string, body: Record<string, unknown>) {
  const response = await askPayment(t, key, reference, body);
  expectStatus(response, 201);
  return response.body.data;
}

export async function getRequest(t: TestApp, key: string, id: string) {
  const response = await t.request('GET', `${PAYMENT_REQUESTS}/${id}`, { key });
  expectStatus(response, 200);
  return response.body.data;
}

export function cancelRequest(t: TestApp, key: string, id: string): Promise<TestResponse> {
  return t.request('POST', `${PAYMENT_REQUESTS}/${id}/cancel`, { key, idempotencyKey: true });
}

/** The wallet app's answer (its PIN taken as checked), in a transaction of its own. */
export function answer(
  t: TestApp,
  phone: string,
  id: string,
  reply: 'APPROVED' | 'DECLINED',
  environment: Environment = 'test',
) {
  return t.runtime.db.transaction().execute((trx) => answerRequest(trx, { phone, environment }, id, reply));
}

/** The worker's pass over due requests, `seconds` from now (no waiting). */
export function endDueIn(t: TestApp, seconds: number): Promise<number> {
  return endDueRequests(t.runtime.db, { now: new Date(Date.now() + seconds * 1000) });
}

/** The payment a request waits on, as stored. */
export async function paymentOf(t: TestApp, requestId: string) {
  return t.runtime.db
    .selectFrom('payment_requests')
    .innerJoin('payments', 'payments.id', 'payment_requests.payment_id')
    .select(['payments.id', 'payments.status', 'payments.method', 'payments.failure_code', 'payments.amount'])
    .where('payment_requests.id', '=', requestId)
    .executeTakeFirstOrThrow();
}

/** Moves a request's `expires_at` into the past, as if its time had run out while the payer typed. */
export async function ageRequest(t: TestApp, id: string): Promise<void> {
  await t.runtime.db
    .updateTable('payment_requests')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('id', '=', id)
    .execute();
}

/** POST to an intent action with a fresh idempotency key. */
export function act(t: TestApp, key: string, reference: string, action: 'cancel' | 'simulate', body: unknown = {}) {
  return t.request('POST', `${INTENTS}/${reference}/${action}`, { key, body, idempotencyKey: true });
}
