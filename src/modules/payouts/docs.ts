import { SANDBOX_FAILING_PAYOUT_PHONE, SANDBOX_LOCKED_PAYER, SANDBOX_WALLET_PIN } from '../sandbox/sandbox.js';

/** What the docs of every payout operation share: how a payout is sent, fails and reconciles. */
export const PAYOUT_SENDING =
  'The worker sends a PENDING payout within about a second: PAID (`payout.paid`) when the wallet takes it, or FAILED (`payout.failed`) with `failureCode` WALLET_NOT_FOUND (no wallet has the phone) or WALLET_LOCKED (the wallet is locked), its amount and fee then back in the balance (`payout_reversal`).';
export const PAYOUT_SANDBOX = `Sandbox (test keys): any E.164 phone without a wallet gets a sandbox wallet (PIN ${SANDBOX_WALLET_PIN}) when the payout is sent; a payout to ${SANDBOX_FAILING_PAYOUT_PHONE} always fails with WALLET_NOT_FOUND, and one to the locked sandbox wallet ${SANDBOX_LOCKED_PAYER} fails with WALLET_LOCKED. A business keeps at most \`SANDBOX_PENDING_PAYOUTS_MAX\` (2,000) sandbox payouts waiting to be sent: beyond, 429 TOO_MANY_PENDING_PAYOUTS with \`Retry-After\`, nothing created (not stored under the idempotency key: retry with the same key).`;
export const PAYOUT_RECONCILIATION =
  "Reconciliation: a payout settles the merchant's balance transactions that no payout had settled yet when it was created (`GET /payouts/{referenceNumber}/transactions`). A failed or cancelled single payout releases them to the next payout; a batch settles them as a whole, and every payout of the batch lists the same transactions.";

/** What a seller's payout is (decision 082). */
export const PAYOUT_SELLER =
  "A seller's payout: with `seller` (SL-...), the payout is paid from that seller's balance (its balance transactions `payout`, `payout_fee` and, should it fail or be cancelled, `payout_reversal` carry `seller`), to the seller's phone: `destination` may be left out, and if given must be that phone (400 VALIDATION_ERROR naming `body.destination.phone` otherwise). 402 INSUFFICIENT_FUNDS when the seller's available balance is below amount + fee: a seller whose balance a refund took below zero is never paid out. An unknown seller, or another business's, is 404 SELLER_NOT_FOUND; the other environment's, 403 SANDBOX_MISMATCH; a DISABLED seller can still be paid out. The payout and its events carry `seller`; it settles the seller's unsettled transactions, not the business's. A refund racing the payout is never refused: if it commits before the payout reads the seller's balance, the payout sees it (and may answer 402); if after, the seller's balance may go below zero and is recovered from its next splits. Batches pay from the business's balance only.";

/** What creating a batch does, at either of its paths. */
export const PAYOUT_BATCH = [
  'Up to 1,000 payouts in one request, all or nothing. Every item is checked first, and one answer names every bad item: 400 VALIDATION_ERROR with one entry of `details` per problem, its `field` naming the item (`body.items.3.amount`, `body.items.5.destination.phone`) and its `code` the one a payout of its own would get for it (AMOUNT_OUT_OF_RANGE, METADATA_TOO_MANY_KEYS, METADATA_VALUE_TOO_LONG, or VALIDATION_ERROR for a field of the wrong shape), whatever the mix; nothing is created. Then the amounts and fees of every item are reserved together, or 402 INSUFFICIENT_FUNDS and nothing is reserved. Each item becomes its own PENDING payout (with its own fee, `batchId` and `payout.created`), answered in the order of the items. The body may be up to 4 MB (1 MB elsewhere): about 4 KB an item at 1,000 items; a larger one answers 413 PAYLOAD_TOO_LARGE and is split.',
  PAYOUT_SENDING,
  PAYOUT_SANDBOX,
  PAYOUT_RECONCILIATION,
].join('\n\n');
export const PAYOUT_BATCH_EXAMPLE = {
  items: [
    { amount: 120000, destination: { type: 'WALLET', phone: '+22220000001' }, description: 'Driver 1' },
    { amount: 80000, destination: { type: 'WALLET', phone: '+22220000002' }, description: 'Driver 2' },
  ],
};
