import type { getBusiness } from '../../../businesses/service.js';
import type { getFeePlan } from '../../../payments/fee-plans.js';
import type { FormState } from '../../view-types.js';

/** The contact form's fields as typed (or as stored). */
export interface ContactTyped {
  phone: string;
  email: string;
  pickupAddress: string;
  delivers: boolean;
}

/** What the settings page draws: the business, its fee plan (read only) and its forms. */
export interface SettingsViews {
  settings: FormState & {
    feePlan: Awaited<ReturnType<typeof getFeePlan>>;
    business: Awaited<ReturnType<typeof getBusiness>>;
    contact: ContactTyped;
    /** The shops' own name; null when they take the business's name. */
    ownShopName: string | null;
    /** The storefront of the dashboard's mode, to copy and share; null for a business without shops. */
    storefront: { name: string; url: string } | null;
  };
}
