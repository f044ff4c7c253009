import { sql, type RawBuilder } from 'kysely';
import type { PaymentLinkStatus, PaymentLinksTable } from '../../db/schema.js';
import type { ErrorCode } from '../../http/errors.js';

type StatusFacts = Pick<PaymentLinksTable, 'max_payments' | 'expires_at'> & {
  active: boolean;
  payments_count: number;
};

/**
 * A link's status, from what is stored: the merchant's switch first (INACTIVE), then the limit
 * (COMPLETED), then the clock (EXPIRED). Raising the limit or moving the expiry opens it again.
 * `statusCondition` is the same rule in SQL, for the list's filter.
 */
export function linkStatus(link: StatusFacts, now: Date): PaymentLinkStatus {
  if (!link.active) return 'INACTIVE';
  if (link.max_payments !== null && link.payments_count >= link.max_payments) return 'COMPLETED';
  if (link.expires_at !== null && link.expires_at <= now) return 'EXPIRED';
  return 'ACTIVE';
}

const completed = sql<boolean>`(l.max_payments IS NOT NULL AND l.payments_count >= l.max_payments)`;
const expired = (now: Date) => sql<boolean>`(l.expires_at IS NOT NULL AND l.expires_at <= ${now}::timestamptz)`;

/** The links (`l`) whose `linkStatus` is `status` at `now`. */
export function statusCondition(status: PaymentLinkStatus, now: Date): RawBuilder<boolean> {
  switch (status) {
    case 'INACTIVE':
      return sql<boolean>`NOT l.active`;
    case 'COMPLETED':
      return sql<boolean>`l.active AND ${completed}`;
    case 'EXPIRED':
      return sql<boolean>`l.active AND NOT ${completed} AND ${expired(now)}`;
    case 'ACTIVE':
      return sql<boolean>`l.active AND NOT ${completed} AND NOT ${expired(now)}`;
    default: {
      const never: never = status;
      throw new Error(`unknown link status ${String(never)}`);
    }
  }
}

/** The refusal a payer meets on a link that takes no payment, by its status. */
export const STATUS_REFUSALS = {
  INACTIVE: 'PAYMENT_LINK_INACTIVE',
  COMPLETED: 'PAYMENT_LINK_COMPLETED',
  EXPIRED: 'PAYMENT_LINK_EXPIRED',
} as const satisfies Record<Exclude<PaymentLinkStatus, 'ACTIVE'>, ErrorCode>;

/**
 * Every refusal a payer meets on a link that takes no payment: its status's, then its business's
 * (the API switched off, or live payments not approved). `PayerLinkView.refusal` is one of these;
 * the payer page words each of them.
 */
export const PAYER_REFUSALS = [
  ...Object.values(STATUS_REFUSALS),
  'FEATURE_DISABLED',
  'LIVE_ACCESS_NOT_APPROVED',
] as const satisfies readonly ErrorCode[];
export type PayerRefusal = (typeof PAYER_REFUSALS)[number];

export function isPayerRefusal(code: ErrorCode): code is PayerRefusal {
  return (PAYER_REFUSALS as readonly ErrorCode[]).includes(code);
}
