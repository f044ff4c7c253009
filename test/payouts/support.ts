import { sendDuePayouts } from '../../src/modules/payouts/send.js';
import { expectStatus, type TestApp, type TestResponse } from '../support/harness.js';
import { act, createIntent } from '../intents/support.js';

export const PAYOUTS = '/api/v1/dev/payouts';

/** A sandbox phone no test has used: a payout opens a wallet for it. */
export function newPhone(): string {
  return `+2223${String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0')}`;
}

export function createPayout(
  t: TestApp,
  key: string,
  body: unknown,
  idempotencyKey: string | true = true,
): Promise<TestResponse> {
  return t.request('POST', PAYOUTS, { key, body, idempotencyKey });
}

export function payoutTo(phone: string, amount: number, extra: Record<string, unknown> = {}) {
  return { amount, destination: { type: 'WALLET', phone }, ...extra };
}

/** Pays the merchant `amount` centimes through a sandbox intent; returns the intent's reference. */
export async function earn(t: TestApp, key: string, amount: number): Promise<string> {
  const intent = await createIntent(t, key, { amount });
  expectStatus(await act(t, key, intent.referenceNumber, 'simulate'), 200);
  return intent.referenceNumber;
}

/** What the worker does every second: sends every PENDING payout. */
export function sendPayouts(t: TestApp): Promise<number> {
  return sendDuePayouts(t.runtime.db);
}

export async function getPayout(t: TestApp, key: string, reference: string): Promise<any> {
  const response = await t.request('GET', `${PAYOUTS}/${reference}`, { key });
  expectStatus(response, 200);
  return response.body.data;
}
