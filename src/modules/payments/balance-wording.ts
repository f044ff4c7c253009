import { defineDictionaries, fillText, type Lang } from '../../lib/i18n.js';
import type { BalanceDetail } from '../../db/schema.js';
import type { BalanceTransactionType } from './balance-types.js';

export type { BalanceDetail };

/**
 * The descriptions, in every language. English is the API's `description`: integrations may show
 * or match those sentences, so their English wording is part of the API and changes as a field does.
 */
export const balanceWordings = defineDictionaries({
  en: {
    payment: 'Payment {source}',
    paymentLabelled: 'Payment {source}: {label}',
    refund: 'Refund {reference} of {source}',
    orderPayment: 'Order {source}',
    orderRefund: 'Refund {reference} of order {source}',
    orderAdjustment: 'Modification {reference} of order {source}',
    payout: 'Payout {source}',
    payoutLabelled: 'Payout {source}: {label}',
    payoutFee: 'Fee of payout {source}',
    payoutFailed: 'Payout {source} failed: amount and fee returned',
    payoutCancelled: 'Payout {source} cancelled: amount and fee returned',
  },
  fr: {
    payment: 'Paiement {source}',
    paymentLabelled: 'Paiement {source} : {label}',
    refund: 'Remboursement {reference} de {source}',
    orderPayment: 'Commande {source}',
    orderRefund: 'Remboursement {reference} de la commande {source}',
    orderAdjustment: 'Modification {reference} de la commande {source}',
    payout: 'Versement {source}',
    payoutLabelled: 'Versement {source} : {label}',
    payoutFee: 'Frais du versement {source}',
    payoutFailed: 'Versement {source} échoué : montant et frais restitués',
    payoutCancelled: 'Versement {source} annulé : montant et frais restitués',
  },
  ar: {
    payment: 'دفعة {source}',
    paymentLabelled: 'دفعة {source}: {label}',
    refund: 'استرداد {reference} من {source}',
    orderPayment: 'طلب {source}',
    orderRefund: 'استرداد {reference} من الطلب {source}',
    orderAdjustment: 'تعديل {reference} للطلب {source}',
    payout: 'تحويل {source}',
    payoutLabelled: 'تحويل {source}: {label}',
    payoutFee: 'رسوم التحويل {source}',
    payoutFailed: 'فشل التحويل {source}: أعيد المبلغ والرسوم',
    payoutCancelled: 'أُلغي التحويل {source}: أعيد المبلغ والرسوم',
  },
});

type Wording = keyof (typeof balanceWordings)['en'];

/** What a description is worded from: a row of balance_transactions, or the API's view of one. */
export interface Describable {
  type: string;
  source_reference: string;
  detail: BalanceDetail;
}

/**
 * A balance transaction's description in `lang`. On a page, references are kept apart from the
 * words by Unicode isolates on a right-to-left language, so that "PI-…" reads whole inside Arabic;
 * a file (`{ file: true }`: a statement's CSV) carries no direction marks (decision 088), they
 * would end up in a spreadsheet's cells.
 */
export function describeBalance(row: Describable, lang: Lang, options: { file?: boolean } = {}): string {
  const { detail } = row;
  if (detail.text !== undefined) return detail.text;
  const words = balanceWordings[lang];
  const isolates = lang === 'ar' && options.file !== true;
  const isolate = (text: string) => (isolates ? `\u2068${text}\u2069` : text);
  const labelled = (plain: Wording, withLabel: Wording): Wording => (detail.label ? withLabel : plain);
  const wordings: Record<BalanceTransactionType, Wording> = {
    payment: labelled('payment', 'paymentLabelled'),
    refund: 'refund',
    order_payment: 'orderPayment',
    order_refund: 'orderRefund',
    order_adjustment: 'orderAdjustment',
    payout: labelled('payout', 'payoutLabelled'),
    payout_fee: 'payoutFee',
    payout_reversal: detail.outcome === 'cancelled' ? 'payoutCancelled' : 'payoutFailed',
  };
  const wording = Object.hasOwn(wordings, row.type) ? wordings[row.type as BalanceTransactionType] : undefined;
  if (wording === undefined) return isolate(row.source_reference);
  return fillText(words[wording], {
    source: isolate(row.source_reference),
    reference: isolate(detail.reference ?? ''),
    label: isolate(detail.label ?? ''),
  });
}
