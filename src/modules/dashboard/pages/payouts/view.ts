import type { balanceTransactionViewIn, BalanceTransactionType } from '../../../payments/balance-transactions.js';
import type { PayoutQuote } from '../../../payouts/quote.js';
import type { PayoutInput } from '../../../payouts/service.js';
import type { PAYOUT_STATUSES, PayoutFailureCode, PayoutStatus } from '../../../payouts/state.js';
import type { batchView, payoutView } from '../../../payouts/views.js';
import type { PayoutField, sealBatch } from './input.js';

/** The new-payout form's fields as typed. */
interface PayoutFormValues {
  amount: string;
  phone: string;
  description: string;
}

/** A batch file's dry run: its lines, each bad line's words, what it would take, and its seal once ready. */
export interface BatchReport {
  lineCount: number;
  errors: { line: number; text: string }[];
  money: PayoutQuote;
  sealed: ReturnType<typeof sealBatch> | null;
}

/** How the pages name each status and failure, in the page's language. */
export interface PayoutWords {
  status: Record<PayoutStatus, string>;
  failure: Record<PayoutFailureCode, string>;
}

type Paged<T> = { total: number; page: number; pages: number } & T;

/** What the Payouts pages' templates draw: the list, the form and its review, a batch, and a payout. */
export interface PayoutViews {
  payouts: Paged<{
    statuses: typeof PAYOUT_STATUSES;
    words: PayoutWords;
    filters: { status: string; batch: string };
    filterQuery: string;
    batch: ReturnType<typeof batchView> | null;
    items: ReturnType<typeof payoutView>[];
  }>;
  'payout-new': { values: PayoutFormValues; problems: Partial<Record<PayoutField, string>>; error?: string };
  'payout-review': { payout: PayoutInput; amountText: string; money: PayoutQuote };
  'payout-batch': { maxLines: number; report: BatchReport | null; error?: string };
  payout: Paged<{
    payout: ReturnType<typeof payoutView>;
    words: PayoutWords;
    cancellable: boolean;
    transactions: ReturnType<typeof balanceTransactionViewIn>[];
    /** Each type's name in the page's language (payments/balance-type-labels.ts). */
    typeLabels: Readonly<Record<BalanceTransactionType, string>>;
    error?: string;
  }>;
}
