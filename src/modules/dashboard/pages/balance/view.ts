import type {
  BALANCE_TRANSACTION_TYPES,
  BalanceTransactionType,
  balanceTransactionViewIn,
} from '../../../payments/balance-transactions.js';

/** A balance transaction as the page lists it: its source linked to that source's own page. */
export type BalanceRow = ReturnType<typeof balanceTransactionViewIn> & { sourceHref: string };

/** A month offered a statement, named in the page's language, with its files. */
export interface StatementLink {
  month: string;
  name: string;
  current: boolean;
  csvUrl: string;
  htmlUrl: string;
}

/** What the Balance page draws: the available balance, the statements, and the filtered transactions. */
export interface BalanceViews {
  balance: {
    available: number;
    statements: StatementLink[];
    types: typeof BALANCE_TRANSACTION_TYPES;
    typeLabels: Record<BalanceTransactionType, string>;
    filters: { type: string; source: string; from: string; to: string };
    filterQuery: string;
    exportUrl: string;
    items: BalanceRow[];
    total: number;
    page: number;
    pages: number;
    error?: string;
  };
}
