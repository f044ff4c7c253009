import { randomInt } from 'node:crypto';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { expectStatus, type TestApp } from '../support/harness.js';

export const LINKS = '/api/v1/dev/payment-links';

/** A link of the business's, created through the API. */
export async function createLink(t: TestApp, key: string, body: Record<string, unknown>) {
  const response = await t.request('POST', LINKS, { key, body, idempotencyKey: true });
  expectStatus(response, 201);
  return response.body.data;
}

/** A link as GET answers it. */
export async function getLink(t: TestApp, key: string, referenceNumber: string) {
  const response = await t.request('GET', `${LINKS}/${referenceNumber}`, { key });
  expectStatus(response, 200);
  return response.body.data;
}

/** PATCH a link with a fresh idempotency key. */
export function patchLink(t: TestApp, key: string, referenceNumber: string, body: Record<string, unknown>) {
  return t.request('PATCH', `${LINKS}/${referenceNumber}`, { key, body, idempotencyKey: true });
}

/** The slug of a link's `url`. */
export function slugOf(link: { url: string }): string {
  return link.url.split('/l/')[1]!;
}

/** A payer pays a link through the page's API (a fresh idempotency key per attempt, as the page sends). */
export function payLink(t: TestApp, link: { url: string }, body: Record<string, unknown>) {
  return t.request('POST', `/checkout/links/${slugOf(link)}/pay`, { body, idempotencyKey: true });
}

/** What the payer's page reads of a link. */
export function payerView(t: TestApp, link: { url: string }) {
  return t.request('GET', `/checkout/links/${slugOf(link)}`);
}

/** A wallet no other test uses, holding `balance` centimes. */
export async function newWallet(
  t: TestApp,
  balance: number,
  environment: 'test' | 'live' = 'test',
): Promise<{ phone: string; pin: string }> {
  const phone = `+2224${String(randomInt(10_000_000)).padStart(7, '0')}`;
  const pin = '4321';
  expectStatus(await t.admin('POST', '/wallets', { phone, pin, balance, environment }), 201);
  return { phone, pin };
}

export async function walletBalance(t: TestApp, phone: string, environment: 'test' | 'live' = 'test'): Promise<number> {
  const response = await t.admin('GET', `/wallets?phone=${encodeURIComponent(phone)}&environment=${environment}`);
  expectStatus(response, 200);
  return response.body.data.balance;
}

/** The tables a payment writes to: a refused payment, or a visitor who only looks, changes none of them. */
const WRITTEN_BY_A_PAYMENT = [
  'payment_intents',
  'payments',
  'events',
  'ledger_postings',
  'balance_transactions',
  'idempotency_keys',
] as const;

export async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of WRITTEN_BY_A_PAYMENT) {
    const row = await t.runtime.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}

export async function ledgerIsSound(t: TestApp): Promise<void> {
  const check = await checkLedger(t.runtime.db);
  if (!check.ok) throw new Error(`ledger check failed:\n${check.problems.join('\n')}`);
}
