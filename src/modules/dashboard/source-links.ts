import type { BalanceSourceKind } from '../../db/schema.js';

// The dashboard page of each thing a page links to, written once: every page (Balance, a payment,
// an order, a payout, a batch, a seller) draws its links from here, so a money link cannot point
// at another kind's page (a payout's reference under /payments answered 404).

/** Where the dashboard is mounted (context.ts re-exports it for the routes). */
export const DASHBOARD = '/dashboard';

/** The page of each kind of source a balance transaction has; a new kind fails to compile until placed. */
const SOURCE_PAGES: Readonly<Record<BalanceSourceKind, string>> = {
  payment_intent: `${DASHBOARD}/payments`,
  order: `${DASHBOARD}/orders`,
  payout: `${DASHBOARD}/payouts`,
};

/** A balance transaction's source: its kind says which page it has. */
export interface LinkedSource {
  kind: BalanceSourceKind;
  reference: string;
}

/** The page of a balance transaction's source (a payment intent, an order, a payout). */
export function sourceHref(source: LinkedSource): string {
  return `${SOURCE_PAGES[source.kind]}/${encodeURIComponent(source.reference)}`;
}

/** The pages a dashboard view links to, by what they show. */
export const dashboardLinks = {
  source: sourceHref,
  payment: (reference: string) => sourceHref({ kind: 'payment_intent', reference }),
  order: (reference: string) => sourceHref({ kind: 'order', reference }),
  payout: (reference: string) => sourceHref({ kind: 'payout', reference }),
  /** A batch's page: the payouts list of that batch, with the batch's totals above it. */
  batch: (id: string) => `${DASHBOARD}/payouts?batch=${encodeURIComponent(id)}`,
  seller: (id: string) => `${DASHBOARD}/sellers/${encodeURIComponent(id)}`,
  /** The Balance page's rows of one source (the filter takes a payment intent's or an order's reference). */
  balanceOf: (reference: string) => `${DASHBOARD}/balance?source=${encodeURIComponent(reference)}`,
} as const;

export type DashboardLinks = typeof dashboardLinks;
