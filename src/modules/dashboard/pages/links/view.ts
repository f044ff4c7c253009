import type { PaymentLinkStatus, PAYMENT_LINK_STATUSES } from '../../../../db/schema.js';
import type { IntentWithRefunds } from '../../../intents/repo.js';
import type { PaymentLinkView } from '../../../links/views.js';
import type { FormState, RefundNote } from '../../view-types.js';

/** The new-link form's fields as typed. */
export interface LinkFormValues {
  label: string;
  amountType: string;
  amount: string;
  minAmount: string;
  maxAmount: string;
  maxPayments: string;
  expiresAt: string;
  collectName: boolean;
  collectNote: boolean;
  successUrl: string;
  metadata: string;
}

/** A link as its pages show it: the API's view, and its amount (or range) in words. */
export interface LinkItem {
  view: PaymentLinkView;
  amountText: string;
}

type Paged<T> = { total: number; page: number; pages: number } & T;

/** What the Payment links pages' templates draw: the list, the new-link form, and a link with its payments. */
export interface LinkViews {
  links: Paged<{
    statuses: typeof PAYMENT_LINK_STATUSES;
    statusWords: Record<PaymentLinkStatus, string>;
    filters: { status: string };
    filterQuery: string;
    items: LinkItem[];
  }>;
  'link-new': FormState & { values: LinkFormValues; labelMax: number };
  link: Paged<
    FormState & {
      link: LinkItem;
      statusWords: Record<PaymentLinkStatus, string>;
      /** The link's address as a QR code (SVG), drawn on the page. */
      qr: string;
      /** The QR code and poster files, on the pay host. */
      files: { svg: string; png: string; poster: string };
      /** The deactivate form's message as typed, when it was refused. */
      inactiveMessage: string;
      /** The most characters the message takes (its field's `maxlength`). */
      messageMax: number;
      payments: IntentWithRefunds[];
      refundNote: RefundNote;
    }
  >;
}
