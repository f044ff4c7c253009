import type { getIntent, IntentView } from '../../../intents/service.js';
import type { INTENT_STATUSES } from '../../../intents/state.js';
import type { IntentWithRefunds } from '../../../intents/repo.js';
import type { PaymentFailureCode } from '../../../payments/state.js';
import type { FormState, RefundNote } from '../../view-types.js';
import type { intentTimeline, paymentAttempts, sourceAmounts } from '../../queries.js';
import type { RequestRow } from '../../../requests/store.js';
import type { SplitRow } from '../../split.js';

/** The one-time payment form's fields as typed. */
interface PaymentFormValues {
  amountType: string;
  amount: string;
  label?: string | undefined;
  metadata?: string | undefined;
}

/** The request form's fields as typed (minutes for `expiresIn`). */
export interface RequestFormValues {
  phone: string;
  expiresIn: string;
  message?: string | undefined;
  amount?: string | undefined;
}

/** What the Payments pages' templates draw: the list, the one-time payment form, and a payment with its actions. */
export interface PaymentViews {
  payments: {
    statuses: typeof INTENT_STATUSES;
    filters: { status: string; from: string; to: string; q: string };
    filterQuery: string;
    items: IntentWithRefunds[];
    refundNote: RefundNote;
    total: number;
    page: number;
    pages: number;
  };
  'payment-new': FormState & { values: PaymentFormValues };
  payment: {
    intent: Awaited<ReturnType<typeof getIntent>>;
    view: IntentView;
    /** The payment's events, oldest first, each with its name in the page's language. */
    timeline: (Awaited<ReturnType<typeof intentTimeline>>[number] & { words: string })[];
    amounts: Awaited<ReturnType<typeof sourceAmounts>>;
    attempts: Awaited<ReturnType<typeof paymentAttempts>>;
    /** What the payment gave each seller of its split (none before it is paid or without one). */
    split: SplitRow[];
    /** The intent's payment requests, newest first. */
    requests: RequestRow[];
    /** The request form: as typed and refused, or blank; its limits. */
    requestForm: FormState & {
      values: RequestFormValues;
      minutes: { min: number; max: number; default: number };
      messageMax: number;
    };
    lastFailure: PaymentFailureCode | null;
    refundNote: RefundNote;
    /** The pay link as a QR code (SVG), while the payment can still be paid. */
    qr: string | null;
    refundable: number;
    can: { cancel: boolean; pay: boolean; expire: boolean; refund: boolean };
  };
}
