import type { Static } from 'typebox';
import type { PaymentLink } from './schemas.js';
import { payerRefusal, type PayerLink } from './pay.js';
import { linkStatus } from './state.js';
import type { LinkRow } from './store.js';

export type PaymentLinkView = Static<typeof PaymentLink>;

/** Where a link's page is, on the pay host. */
export function linkUrl(slug: string, payBase: string): string {
  return `${payBase}/l/${slug}`;
}

export function linkView(link: LinkRow, payBase: string, now = new Date()): PaymentLinkView {
  const url = linkUrl(link.slug, payBase);
  return {
    referenceNumber: link.reference_number,
    url,
    qrUrl: `${url}/qr.svg`,
    label: link.label,
    amountType: link.amount_type,
    amount: link.amount,
    minAmount: link.min_amount,
    maxAmount: link.max_amount,
    currency: 'MRU',
    maxPayments: link.max_payments,
    expiresAt: link.expires_at?.toISOString() ?? null,
    collect: { name: link.collect_name, note: link.collect_note },
    successUrl: link.success_url,
    metadata: link.metadata,
    status: linkStatus(link, now),
    active: link.active,
    inactiveMessage: link.inactive_message,
    paymentsCount: link.payments_count,
    amountCollected: Number(link.amount_collected),
    sandbox: link.environment === 'test',
    createdAt: link.created_at.toISOString(),
    updatedAt: link.updated_at.toISOString(),
  };
}

/** The longest slug a route looks up (a link's are 12 characters). */
export const SLUG_MAX = 32;

/** What a payer's page reads of a link: what to pay, to whom, and whether it takes payments; nothing else. */
export function payerLinkView(found: PayerLink, now = new Date()) {
  const { link } = found;
  const refusal = payerRefusal(found, now);
  return {
    merchantName: found.merchantName,
    label: link.label,
    amountType: link.amount_type,
    amount: link.amount,
    minAmount: link.min_amount,
    maxAmount: link.max_amount,
    payerFee: found.payerFee,
    currency: 'MRU' as const,
    collect: { name: link.collect_name, note: link.collect_note },
    status: linkStatus(link, now),
    /** The code a payment would be refused with now (the page words it), or null when it takes one. */
    refusal: refusal?.code ?? null,
    inactiveMessage: link.active ? null : link.inactive_message,
    sandbox: link.environment === 'test',
  };
}

export type PayerLinkView = ReturnType<typeof payerLinkView>;
