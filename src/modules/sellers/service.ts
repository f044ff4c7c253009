import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { DB, SellerStatus } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { invalid } from '../../http/errors.js';
import { checkMetadata } from '../../http/metadata.js';
import { randomDigits } from '../../lib/ids.js';
import { accountBalance } from '../payments/ledger.js';
import type { CreateSellerBody, UpdateSellerBody } from './schemas.js';
import { visibleSeller } from './lookup.js';
import {
  insertSeller,
  listSellers as listSellerRows,
  updateSeller as updateSellerRow,
  type SellerChange,
  type SellerRow,
} from './store.js';
import { sellerEvent } from './views.js';

export type CreateSellerInput = Static<typeof CreateSellerBody>;
export type UpdateSellerInput = Static<typeof UpdateSellerBody>;

/** The name trimmed: a blank one is a missing one (the schema counts its length before the trim). */
function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw invalid('body.name', 'is required');
  return trimmed;
}

/** A new seller of the caller's, ACTIVE, with its ledger account at 0 and `seller.created`. */
export async function createSeller(trx: Executor, caller: Caller, input: CreateSellerInput): Promise<SellerRow> {
  const name = checkName(input.name);
  const metadata = input.metadata ?? {};
  checkMetadata(metadata);
  return insertSeller(
    trx,
    {
      // 10^16 ids: a clash fails the statement, as a PR- id's would, rather than being looked for.
      id: `SL-${randomDigits(16)}`,
      businessId: caller.businessId,
      environment: caller.environment,
      name,
      phone: input.phone,
      commissionBps: input.commissionBps ?? 0,
      payoutSchedule: input.payoutSchedule ?? 'MANUAL',
      metadata,
      createdAt: new Date(),
    },
    (row) => sellerEvent('seller.created', row),
  );
}

export function getSeller(db: Kysely<DB>, caller: Caller, id: string): Promise<SellerRow> {
  return visibleSeller(db, caller, id, 'params.id');
}

export function listSellers(
  db: Kysely<DB>,
  caller: Caller,
  query: { status: SellerStatus | undefined; limit: number; offset: number },
) {
  return listSellerRows(db, caller, query);
}

/**
 * A merchant's change to a seller, under its row lock. Only what differs is written: a patch that
 * changes nothing answers the seller as it is and sends no event. DISABLED takes no new split
 * (decision 079); the seller keeps its balance and can still be paid out.
 */
export async function updateSeller(
  trx: Executor,
  caller: Caller,
  id: string,
  input: UpdateSellerInput,
): Promise<SellerRow> {
  const seller = await visibleSeller(trx, caller, id, 'params.id', { lock: true });
  const change: SellerChange = {};
  if (input.name !== undefined) {
    const name = checkName(input.name);
    if (name !== seller.name) change.name = name;
  }
  if (input.phone !== undefined && input.phone !== seller.phone) change.phone = input.phone;
  if (input.commissionBps !== undefined && input.commissionBps !== seller.commission_bps) {
    change.commission_bps = input.commissionBps;
  }
  if (input.status !== undefined && input.status !== seller.status) change.status = input.status;
  if (input.payoutSchedule !== undefined && input.payoutSchedule !== seller.payout_schedule) {
    change.payout_schedule = input.payoutSchedule;
  }
  if (input.metadata !== undefined) {
    checkMetadata(input.metadata);
    if (JSON.stringify(input.metadata) !== JSON.stringify(seller.metadata)) change.metadata = input.metadata;
  }
  if (Object.keys(change).length === 0) return seller;
  const now = new Date();
  const event = sellerEvent('seller.updated', { ...seller, ...change, updated_at: now });
  return updateSellerRow(trx, id, change, now, event);
}

/** A seller's balance: what its ledger account holds (its row and its pending movements), as the merchant's is read. */
export async function sellerBalance(db: Kysely<DB>, caller: Caller, id: string): Promise<number> {
  const seller = await visibleSeller(db, caller, id, 'params.id');
  return accountBalance(db, seller.environment, { kind: 'seller', ownerId: seller.id });
}
