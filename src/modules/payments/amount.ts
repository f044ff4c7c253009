import { ApiError } from '../../http/errors.js';
import type { Lang } from '../../lib/i18n.js';

/**
 * decisions.md: a payment is 1 to `INTENT_MAX_AMOUNT` centimes, however it is asked for: an
 * intent's amount, the amount paid to an OPEN intent (checkout, simulate), an order's total
 * (placed, priced in a cart, or changed by the merchant). One rule, so every route refuses the
 * same bad amount with the same message.
 */
export function checkPaymentAmount(amount: number, maxAmount: number): void {
  if (amount < 1 || amount > maxAmount) {
    throw new ApiError('AMOUNT_OUT_OF_RANGE', `The amount must be between 1 and ${maxAmount} centimes.`);
  }
}

/**
 * What a page says of an amount `checkPaymentAmount` refused, in its language (pages never show
 * the API's English message): the checkout, the storefront and the dashboard's payment form.
 */
export const PAYMENT_AMOUNT_OUT_OF_RANGE_TEXT: Readonly<Record<Lang, string>> = {
  en: 'This amount is outside the allowed range.',
  fr: 'Ce montant est hors des limites autorisées.',
  ar: 'هذا المبلغ خارج الحدود المسموح بها.',
};
