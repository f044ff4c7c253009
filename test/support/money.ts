import type { BalanceEntry } from '../../src/modules/payments/ledger.js';

/**
 * The balance entry of a merchant debit a test posts by hand (a payout, before payouts exist):
 * the gross is the movement itself, so the fee is 0.
 */
export function testPayout(amount: number): BalanceEntry {
  return {
    type: 'order_adjustment',
    amount,
    source: { reference: 'OR-0000000000000000', kind: 'order' },
    detail: { reference: 'OA-test' },
  };
}
