import type { BalanceOwner } from './balance-transactions.js';
import type { BalanceTransactionType } from './balance-types.js';

/**
 * What a balance statement is (statements.ts makes one, statement-csv.ts writes it): apart, so
 * that the CSV writer and the statement read the same shapes without importing each other.
 */

export interface StatementPeriod {
  /** The first instant of the period. */
  from: Date;
  /** The first instant after it: a transaction of the period was created before it. */
  to: Date;
  /** The first and the last UTC day of the period, YYYY-MM-DD. */
  firstDay: string;
  lastDay: string;
  /** What names the period in a file name: `2026-11` or `2026-11-01_2026-11-30`. */
  label: string;
}

export interface TypeTotal {
  type: BalanceTransactionType;
  count: number;
  /** sum(amount), sum(fee) and sum(net) of the type's transactions in the period, in centimes. */
  gross: number;
  fees: number;
  net: number;
}

export interface BalanceStatement {
  caller: BalanceOwner;
  period: StatementPeriod;
  business: { id: string; name: string };
  /** The seller whose statement it is (decision 082); null for the business's own. */
  seller: { id: string; name: string } | null;
  openingBalance: number;
  closingBalance: number;
  transactionCount: number;
  /** One per type of BALANCE_TRANSACTION_TYPES, in its order, zeros included. */
  totals: TypeTotal[];
}
