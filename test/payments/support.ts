import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { checkLedger, foldPendingMovements } from '../../src/modules/payments/ledger.js';
import { expectStatus, type TestApp } from '../support/harness.js';

export const BALANCE = '/api/v1/dev/balance';

export async function setPlan(
  t: TestApp,
  businessId: string,
  plan: {
    providerBps?: number;
    payerFee?: number;
    tofBps?: number;
    tteBps?: number;
    revenueModel?: 'COMMISSION' | 'MARGIN';
    marginBps?: number;
  },
): Promise<void> {
  expectStatus(await t.admin('PUT', `/businesses/${businessId}/fees`, plan), 200);
}

/** What the platform's accounts hold of the given ledger transactions, by account kind. */
export async function platformShares(
  t: TestApp,
  transactionIds: string[],
): Promise<{ revenue: number; tof: number; tte: number }> {
  const rows = await sql<{ kind: string; total: string }>`
    SELECT a.kind, sum(p.amount)::text AS total FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.account_id
    WHERE p.transaction_id IN (${sql.join(transactionIds)}) AND a.kind IN ('revenue', 'tof', 'tte')
    GROUP BY a.kind`.execute(t.runtime.db);
  const of = (kind: string) => Number(rows.rows.find((row) => row.kind === kind)?.total ?? 0);
  return { revenue: of('revenue'), tof: of('tof'), tte: of('tte') };
}

/** The ledger transactions of an intent: its payment's and its refunds'. */
export async function intentTransactions(t: TestApp, reference: string): Promise<string[]> {
  const rows = await sql<{ transaction_id: string }>`
    SELECT DISTINCT transaction_id FROM ledger_postings WHERE reference = ${reference}
    UNION SELECT r.ledger_transaction_id FROM refunds r JOIN payment_intents i ON i.id = r.intent_id
    WHERE i.reference_number = ${reference} AND r.ledger_transaction_id IS NOT NULL`.execute(t.runtime.db);
  return rows.rows.map((row) => row.transaction_id);
}

/** The ledger transactions an order names: its payment, its adjustments and its refunds. */
export function orderTransactions(order: {
  payment: { ledgerTransactionId: string; adjustments: { ledgerTransactionId: string }[] };
  refunds: { ledgerTransactionId: string | null }[];
}): string[] {
  return [
    order.payment.ledgerTransactionId,
    ...order.payment.adjustments.map((adjustment) => adjustment.ledgerTransactionId),
    ...order.refunds.flatMap((refund) => (refund.ledgerTransactionId ? [refund.ledgerTransactionId] : [])),
  ];
}

/** `ledger check` passes (every platform account at or above zero among its invariants). */
export async function assertLedgerSound(t: TestApp): Promise<void> {
  const check = await checkLedger(t.runtime.db);
  assert.deepEqual(check.problems, [], 'ledger check');
}

/** Every balance transaction of a key's environment, through the API, newest first. */
export async function allBalanceTransactions(t: TestApp, key: string, query = ''): Promise<any[]> {
  const items: any[] = [];
  for (let page = 1; ; page++) {
    const response = await t.request('GET', `${BALANCE}/transactions?limit=100&page=${page}${query}`, { key });
    expectStatus(response, 200);
    items.push(...response.body.data.items);
    if (!response.body.data.hasMore) return items;
  }
}

/** The merchant balance equals the sum of its balance transactions' net, and each nets out. */
export async function assertBalanceExplained(t: TestApp, key: string): Promise<any[]> {
  const balance = await t.request('GET', BALANCE, { key });
  expectStatus(balance, 200);
  const items = await allBalanceTransactions(t, key);
  for (const item of items) assert.equal(item.amount - item.fee, item.net, `${item.id}: amount - fee = net`);
  assert.equal(
    items.reduce((sum, item) => sum + item.net, 0),
    balance.body.data.available,
    'the balance is the sum of the transactions',
  );
  return items;
}

export async function fold(t: TestApp): Promise<void> {
  await foldPendingMovements(t.runtime.db);
}
