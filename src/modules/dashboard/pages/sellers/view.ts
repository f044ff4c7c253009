import type {
  SELLER_PAYOUT_SCHEDULES,
  SELLER_STATUSES,
  SellerPayoutSchedule,
  SellerStatus,
} from '../../../../db/schema.js';
import type { BalanceTransactionType } from '../../../payments/balance-transactions.js';
import type { SplitShareRecord } from '../../../../db/schema.js';
import type { IntentStatus } from '../../../intents/state.js';
import type { PayoutQuote } from '../../../payouts/quote.js';
import type { PayoutStatus } from '../../../payouts/state.js';
import type { PayoutView } from '../../../payouts/views.js';
import type { SellerView } from '../../../sellers/views.js';
import type { BalanceRow, StatementLink } from '../balance/view.js';
import type { FormState } from '../../view-types.js';

/** The seller forms' fields as typed (the new-seller form has no status). */
export interface SellerFormValues {
  name: string;
  phone: string;
  commission: string;
  status: string;
  payoutSchedule: string;
}

/**
 * A seller as its pages show it: the API's view and what its ledger account holds, in centimes
 * (`null` for a role without `balance.read`).
 */
export interface SellerItem {
  view: SellerView;
  balance: number | null;
}

/** A payment whose split names the seller: its amount (null: open and unpaid) and the seller's share once paid. */
export interface SellerPayment {
  referenceNumber: string;
  amount: number | null;
  share: SplitShareRecord | null;
  status: IntentStatus;
  createdAt: Date;
}

type Paged<T> = { total: number; page: number; pages: number } & T;

/** The seller's Pay out form: the amount and description as typed, each refused one's words, and why it was refused. */
export interface PayOutForm {
  values: { amount: string; description: string };
  problems: Partial<Record<'amount' | 'description', string>>;
  error?: string;
}

/** How the seller forms name a status and a payout schedule, in the page's language. */
interface Choices {
  statuses: typeof SELLER_STATUSES;
  statusWords: Record<SellerStatus, string>;
  schedules: typeof SELLER_PAYOUT_SCHEDULES;
  scheduleWords: Record<SellerPayoutSchedule, string>;
}

/**
 * What the Sellers pages' templates draw: the list, the new-seller form, a seller with its
 * activity, payouts, statements and forms, and the review of a payout to a seller.
 */
export interface SellerViews {
  sellers: Paged<{
    statuses: typeof SELLER_STATUSES;
    statusWords: Record<SellerStatus, string>;
    filters: { status: string };
    filterQuery: string;
    items: SellerItem[];
  }>;
  'seller-new': FormState & Choices & { values: SellerFormValues; nameMax: number; phoneExample: string };
  seller: FormState &
    Choices & {
      seller: SellerItem;
      /** The edit form's fields: the seller's own, or what was typed when it was refused. */
      values: SellerFormValues;
      nameMax: number;
      phoneExample: string;
      typeLabels: Record<BalanceTransactionType, string>;
      /** Its balance transactions, newest first, each linked to its source's page (null without `balance.read`). */
      activity: Paged<{ items: BalanceRow[] }> | null;
      /** Its payouts, newest first, each linked to its page; a FAILED or CANCELLED one says so (null without `balance.read`). */
      payouts: Paged<{ items: PayoutView[] }> | null;
      payoutStatusWords: Record<PayoutStatus, string>;
      /** The payments whose split names it, newest first. */
      payments: Paged<{ items: SellerPayment[] }>;
      /** Its monthly statements (null without `balance.read`). */
      statements: StatementLink[] | null;
      payOut: PayOutForm;
    };
  'seller-payout-review': {
    seller: SellerView;
    amountText: string;
    description: string;
    money: PayoutQuote;
  };
}
