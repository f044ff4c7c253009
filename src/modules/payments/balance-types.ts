/**
 * A merchant's balance transactions: one per movement of its account, written by the statement
 * that posts the movement (ledger.ts `transfer`), so the sum of their `net` is the balance.
 */
export const BALANCE_TRANSACTION_TYPES = [
  'payment',
  'refund',
  'order_payment',
  'order_refund',
  'order_adjustment',
  'payout',
  'payout_fee',
  'payout_reversal',
] as const;

export type BalanceTransactionType = (typeof BALANCE_TRANSACTION_TYPES)[number];

export { BALANCE_SOURCE_KINDS, type BalanceSourceKind } from '../../db/schema/payments.js';
