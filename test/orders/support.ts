import { randomInt } from 'node:crypto';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { expectStatus, type TestApp, type TestResponse } from '../support/harness.js';

export const ORDERS = '/api/v1/dev/store/orders';
export const RICH = { phone: '+22220000001', pin: '1234' };
export const NEARLY_EMPTY = { phone: '+22220000002', pin: '1234' };
export const LOCKED = { phone: '+22220000003', pin: '1234' };

/** A phone no test has used: a sandbox simulation gives it a funded wallet (PIN 1234). */
export function freshPhone(): string {
  return `+2224${String(randomInt(10_000_000)).padStart(7, '0')}`;
}

export function orderAction(t: TestApp, key: string, path: string, body: unknown = {}): Promise<TestResponse> {
  return t.request('POST', `${ORDERS}${path}`, { key, idempotencyKey: true, body });
}

export async function simulate(
  t: TestApp,
  key: string,
  items: unknown[],
  customerPhone?: string,
): Promise<TestResponse> {
  return orderAction(t, key, '/simulate', {
    items,
    customerName: 'Aicha',
    ...(customerPhone ? { customerPhone } : {}),
  });
}

export async function walletBalance(t: TestApp, phone: string, environment: 'test' | 'live' = 'test'): Promise<number> {
  const response = await t.admin('GET', `/wallets?phone=${encodeURIComponent(phone)}&environment=${environment}`);
  expectStatus(response, 200);
  return response.body.data.balance;
}

export async function merchantBalance(t: TestApp, key: string): Promise<number> {
  const response = await t.request('GET', '/api/v1/dev/balance', { key });
  expectStatus(response, 200);
  return response.body.data.available;
}

export async function setFeePlan(
  t: TestApp,
  businessId: string,
  plan: { providerBps: number; payerFee: number; tofBps?: number; tteBps?: number },
): Promise<void> {
  const values = {
    business_id: businessId,
    provider_bps: plan.providerBps,
    payer_fee: plan.payerFee,
    tof_bps: plan.tofBps ?? 500,
    tte_bps: plan.tteBps ?? 0,
  };
  await t.runtime.db
    .insertInto('fee_plans')
    .values(values)
    .onConflict((conflict) => conflict.column('business_id').doUpdateSet(values))
    .execute();
}

export async function ledgerIsSound(t: TestApp): Promise<void> {
  const check = await checkLedger(t.runtime.db);
  if (!check.ok) throw new Error(`ledger check failed:\n${check.problems.join('\n')}`);
}

export async function postingsOf(t: TestApp, reference: string) {
  return t.runtime.db
    .selectFrom('ledger_postings as p')
    .innerJoin('ledger_accounts as a', 'a.id', 'p.account_id')
    .select(['p.transaction_id', 'p.amount', 'p.kind', 'a.kind as account', 'a.owner_id'])
    .where('p.reference', '=', reference)
    .orderBy('p.id')
    .execute();
}
