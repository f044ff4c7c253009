import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import { payerNameSql } from '../businesses/payer-name.js';
import type { WalletOwner } from './store.js';

/**
 * What came back to the wallet, or was taken from it, after a payment: a refund (an intent's or
 * an order's, a cancel's included), or an order's modification charging more or giving back the
 * difference. Signed as the wallet sees it: positive received, negative paid.
 */
export interface FollowUp {
  kind: 'REFUND' | 'ADJUSTMENT';
  amount: number;
  at: Date;
}

/**
 * One line of the wallet's history: a payment the wallet made (through any channel: the
 * checkout, a code, a link, a request, a storefront order, the sandbox), or a payout it received.
 */
export type HistoryEntry =
  | {
      kind: 'PAYMENT';
      reference: string;
      merchantName: string;
      amount: number;
      /**
       * The payer fee the platform charged on top of the amount (a business's fee plan may set
       * one, `payer_fee`; the payment's commission keeps it as `payer_ttc`). Never refunded.
       */
      fee: number;
      at: Date;
      followUps: FollowUp[];
    }
  | { kind: 'PAYOUT'; reference: string; merchantName: string; amount: number; at: Date };

/** A page of history, newest first, and where the older lines start (undefined: none older). */
export interface HistoryPage {
  entries: HistoryEntry[];
  older: string | undefined;
}

/** How many lines a page of history shows; the "older" link reads the next ones. */
export const HISTORY_PAGE = 50;

/**
 * Where a page of history starts: the line before which it reads, as the "older" link carries it
 * (`?before=`): the line's time to the microsecond, in UTC, and its id, which orders lines of the
 * same time. Anything else is no cursor (the newest page).
 */
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)~([A-Za-z0-9_-]{1,64})$/;

export interface HistoryCursor {
  at: string;
  key: string;
}

export function parseCursor(value: unknown): HistoryCursor | undefined {
  const match = typeof value === 'string' ? CURSOR.exec(value) : null;
  return match ? { at: match[1]!, key: match[2]! } : undefined;
}

interface LineRow {
  kind: HistoryEntry['kind'];
  key: string;
  reference: string;
  business_id: string;
  merchant_name: string;
  amount: string | number;
  fee: string | number;
  at: Date;
  cursor_at: string;
}

interface FollowUpRow {
  business_id: string;
  source_reference: string;
  type: 'refund' | 'order_refund' | 'order_adjustment';
  wallet_amount: string | number;
  at: Date;
}

/**
 * A page of the wallet's history: the payments it made and the payouts it received, newest first,
 * each payment with what came back to it since. Each half reads its own index (migration 043)
 * from the cursor on, no more than a page, so a page costs the same however long the history is.
 */
export async function walletHistory(db: Executor, owner: WalletOwner, before?: HistoryCursor): Promise<HistoryPage> {
  const after = (at: string, key: string) =>
    before ? sql`AND (${sql.ref(at)}, ${sql.ref(key)}) < (${before.at}::timestamptz, ${before.key})` : sql``;
  const merchant = payerNameSql('b', owner.environment).name;
  const result = await sql<LineRow>`SELECT h.*,
      to_char(h.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
    FROM (
      (SELECT 'PAYMENT' AS kind, p.id AS key, coalesce(i.reference_number, o.reference_number) AS reference,
        p.business_id, ${merchant} AS merchant_name, p.amount, coalesce((p.commission ->> 'payer_ttc')::bigint, 0) AS fee,
        p.settled_at AS at
      FROM payments p
      JOIN businesses b ON b.id = p.business_id
      LEFT JOIN payment_intents i ON i.id = p.intent_id
      LEFT JOIN orders o ON o.id = p.order_id
      WHERE p.payer_wallet_id = ${owner.walletId} AND p.status = 'SUCCEEDED' ${after('p.settled_at', 'p.id')}
      ORDER BY p.settled_at DESC, p.id DESC LIMIT ${HISTORY_PAGE + 1})
      UNION ALL
      (SELECT 'PAYOUT', p.reference, p.reference, p.business_id, ${merchant}, p.amount, 0, p.paid_at
      FROM payouts p JOIN businesses b ON b.id = p.business_id
      WHERE p.wallet_id = ${owner.walletId} AND p.status = 'PAID' ${after('p.paid_at', 'p.reference')}
      ORDER BY p.paid_at DESC, p.reference DESC LIMIT ${HISTORY_PAGE + 1})
    ) h ORDER BY h.at DESC, h.key DESC LIMIT ${HISTORY_PAGE + 1}`.execute(db);
  const rows = result.rows.slice(0, HISTORY_PAGE);
  const last = rows.at(-1);
  const older = result.rows.length > HISTORY_PAGE && last ? `${last.cursor_at}~${last.key}` : undefined;
  const followUps = await followUpsOf(db, owner, rows);
  const entries = rows.map((row): HistoryEntry => {
    const line = { reference: row.reference, merchantName: row.merchant_name, amount: Number(row.amount) };
    if (row.kind === 'PAYOUT') return { kind: 'PAYOUT', ...line, at: new Date(row.at) };
    const after = followUps.get(`${row.business_id} ${row.reference}`) ?? [];
    return { kind: 'PAYMENT', ...line, fee: Number(row.fee), at: new Date(row.at), followUps: after };
  });
  return { entries, older };
}

/**
 * The refunds and modifications of the page's payments, from their merchant's balance
 * transactions (by their source index), each with the wallet's own line of its ledger
 * transaction: what this wallet got back or paid, to the centime.
 */
async function followUpsOf(db: Executor, owner: WalletOwner, rows: LineRow[]): Promise<Map<string, FollowUp[]>> {
  const payments = rows.filter((row) => row.kind === 'PAYMENT');
  const byPayment = new Map<string, FollowUp[]>();
  if (payments.length === 0) return byPayment;
  const sources = sql.join(payments.map((row) => sql`(${row.business_id}, ${owner.environment}, ${row.reference})`));
  const result = await sql<FollowUpRow>`SELECT bt.business_id, bt.source_reference, bt.type,
      w.amount AS wallet_amount, bt.created_at AS at
    FROM balance_transactions bt
    JOIN ledger_postings w ON w.transaction_id = bt.ledger_transaction_id
    JOIN ledger_accounts a ON a.id = w.account_id AND a.kind = 'wallet' AND a.owner_id = ${owner.walletId}
    WHERE (bt.business_id, bt.environment, bt.source_reference) IN (${sources})
      AND bt.type IN ('refund', 'order_refund', 'order_adjustment') AND bt.seller_id IS NULL
    ORDER BY bt.created_at, bt.id`.execute(db);
  for (const row of result.rows) {
    const key = `${row.business_id} ${row.source_reference}`;
    const list = byPayment.get(key) ?? [];
    list.push({
      kind: row.type === 'order_adjustment' ? 'ADJUSTMENT' : 'REFUND',
      amount: Number(row.wallet_amount),
      at: new Date(row.at),
    });
    byPayment.set(key, list);
  }
  return byPayment;
}
