import type { ActivityViews } from './pages/activity/view.js';
import type { AuthViews } from './pages/auth/view.js';
import type { BalanceViews } from './pages/balance/view.js';
import type { DeveloperViews } from './pages/developers/view.js';
import type { HomeViews } from './pages/home/view.js';
import type { LinkViews } from './pages/links/view.js';
import type { OrderViews } from './pages/orders/view.js';
import type { PaymentViews } from './pages/payments/view.js';
import type { PayoutViews } from './pages/payouts/view.js';
import type { ProductViews } from './pages/products/view.js';
import type { SellerViews } from './pages/sellers/view.js';
import type { SettingsViews } from './pages/settings/view.js';
import type { TeamViews } from './pages/team/view.js';

/** The pages every part of the dashboard may draw: a message (a refusal, an error, a page not found). */
interface SharedViews {
  message: { title: string; kind: string };
}

/**
 * Every dashboard template by name, with the data its page gives it: each page folder's view.ts
 * declares its own, gathered here, so `sendPage(…, 'payout', data)` checks `data` against the
 * payout page's view model. What every page shows besides (words, language, session, formats) is
 * added by sendPage.
 */
export interface Views
  extends
    SharedViews,
    ActivityViews,
    AuthViews,
    BalanceViews,
    DeveloperViews,
    HomeViews,
    LinkViews,
    OrderViews,
    PaymentViews,
    PayoutViews,
    ProductViews,
    SellerViews,
    SettingsViews,
    TeamViews {}

export type ViewName = keyof Views;

/** A page drawn by name with its data, the name choosing the data's type. */
export type DrawnPage = { [K in ViewName]: { template: K; data: Views[K] } }[ViewName];
