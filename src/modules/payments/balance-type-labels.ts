import { defineDictionaries, type Lang } from '../../lib/i18n.js';
import type { BalanceTransactionType } from './balance-types.js';

/**
 * The name of each type of balance transaction, in every language: written once, read by the
 * Balance page (its list and type filter), a payout's page, a seller's page and the statements
 * (CSV and printable page). A payout's money comes back when the payout failed or was cancelled:
 * its type says only that it came back, the description says why (balance-wording.ts).
 */
export const balanceTypeLabels = defineDictionaries<Record<BalanceTransactionType, string>>({
  en: {
    payment: 'Payment',
    refund: 'Refund',
    order_payment: 'Order payment',
    order_refund: 'Order refund',
    order_adjustment: 'Order adjustment',
    payout: 'Payout',
    payout_fee: 'Payout fee',
    payout_reversal: 'Payout returned',
  },
  fr: {
    payment: 'Paiement',
    refund: 'Remboursement',
    order_payment: 'Paiement de commande',
    order_refund: 'Remboursement de commande',
    order_adjustment: 'Ajustement de commande',
    payout: 'Versement',
    payout_fee: 'Frais de versement',
    payout_reversal: 'Versement restitué',
  },
  ar: {
    payment: 'دفعة',
    refund: 'استرداد',
    order_payment: 'دفع طلب',
    order_refund: 'استرداد طلب',
    order_adjustment: 'تعديل طلب',
    payout: 'تحويل',
    payout_fee: 'رسوم التحويل',
    payout_reversal: 'تحويل مُعاد',
  },
});

/** A type's name in `lang`; a type outside the list (a row older than it) as it is stored. */
export function balanceTypeLabel(type: string, lang: Lang): string {
  const labels = balanceTypeLabels[lang];
  return Object.hasOwn(labels, type) ? labels[type as BalanceTransactionType] : type;
}
