import type { SELLER_STATUSES, SellerStatus } from '../../../../db/schema.js';
import type { SellerView } from '../../../sellers/views.js';
import type { FormState } from '../../view-types.js';

/** The seller forms' fields as typed (the new-seller form has no status). */
export interface SellerFormValues {
  name: string;
  phone: string;
  commission: string;
  status: string;
}

/** A seller as its pages show it: the API's view and what its ledger account holds, in centimes. */
export interface SellerItem {
  view: SellerView;
  balance: number;
}

type Paged<T> = { total: number; page: number; pages: number } & T;

/** What the Sellers pages' templates draw: the list, the new-seller form, and a seller with its edit form. */
export interface SellerViews {
  sellers: Paged<{
    statuses: typeof SELLER_STATUSES;
    statusWords: Record<SellerStatus, string>;
    filters: { status: string };
    filterQuery: string;
    items: SellerItem[];
  }>;
  'seller-new': FormState & { values: SellerFormValues; nameMax: number; phoneExample: string };
  seller: FormState & {
    seller: SellerItem;
    statuses: typeof SELLER_STATUSES;
    statusWords: Record<SellerStatus, string>;
    /** The edit form's fields: the seller's own, or what was typed when it was refused. */
    values: SellerFormValues;
    nameMax: number;
    phoneExample: string;
  };
}
