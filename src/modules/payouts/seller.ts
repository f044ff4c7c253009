import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { visibleSeller } from '../sellers/lookup.js';

/** One payout to create, its destination and seller settled. */
export interface PayoutInput {
  amount: number;
  destination: { type: 'WALLET'; phone: string };
  description?: string | undefined;
  metadata?: Record<string, string> | undefined;
  /** The seller it pays from its own balance (`payoutInput`, decision 082). */
  seller?: string | undefined;
}

/** A payout as `POST /payouts` takes it: to a destination, or to a seller (decision 082). */
export type PayoutRequest = Omit<PayoutInput, 'destination' | 'seller'> & {
  destination?: PayoutInput['destination'] | undefined;
  seller?: string | undefined;
};

/**
 * The payout a request makes (decision 082). Without `seller`: to its destination, from the
 * business's balance. With `seller`: to the seller's phone, from the seller's balance; a
 * destination may be given only if it is that phone (another is refused, never ignored: the caller
 * meant someone else). The seller must be the caller's (404 SELLER_NOT_FOUND; the other
 * environment's: 403 SANDBOX_MISMATCH); a DISABLED seller can still be paid out (decision 079).
 */
export async function payoutInput(db: Executor, caller: Caller, request: PayoutRequest): Promise<PayoutInput> {
  const { seller: sellerId, destination, ...rest } = request;
  if (sellerId === undefined) {
    if (!destination) {
      throw new ApiError('VALIDATION_ERROR', 'body.destination is required unless body.seller is given.', [
        { field: 'body.destination', message: 'is required unless body.seller is given' },
      ]);
    }
    return { ...rest, destination };
  }
  const seller = await visibleSeller(db, caller, sellerId, 'body.seller');
  if (destination && destination.phone !== seller.phone) {
    throw new ApiError('VALIDATION_ERROR', "body.destination.phone is not the seller's phone: leave it out.", [
      { field: 'body.destination.phone', message: "must be the seller's phone, or absent" },
    ]);
  }
  return { ...rest, destination: { type: 'WALLET', phone: seller.phone }, seller: seller.id };
}
