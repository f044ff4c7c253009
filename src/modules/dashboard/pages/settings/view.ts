import type { getBusiness } from '../../../businesses/service.js';
import type { getFeePlan } from '../../../payments/fee-plans.js';
import type { FormState } from '../../view-types.js';
import type { listUsers } from '../../users.js';

/** The contact form's fields as typed (or as stored). */
export interface ContactTyped {
  phone: string;
  email: string;
  pickupAddress: string;
  delivers: boolean;
}

/** What the settings page draws: the business, its users, its fee plan (read only) and its forms. */
export interface SettingsViews {
  settings: FormState & {
    users: Awaited<ReturnType<typeof listUsers>>;
    feePlan: Awaited<ReturnType<typeof getFeePlan>>;
    business: Awaited<ReturnType<typeof getBusiness>>;
    /** The invitation form as typed: a refused one is drawn again. */
    invite: { email: string; role: string };
    contact: ContactTyped;
  };
}
