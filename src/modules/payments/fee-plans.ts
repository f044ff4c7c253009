import { sql } from 'kysely';
import type { RevenueModel } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { feePlanFromColumns, type PayoutFeePlan } from './fees.js';

/** A business's fee plan as the operator sets it (`PUT /admin/businesses/{id}/fees`). */
export interface FeePlanView {
  businessId: string;
  providerBps: number;
  payerFee: number;
  tofBps: number;
  tteBps: number;
  revenueModel: RevenueModel;
  marginBps: number;
  payoutFeeFlat: number;
  payoutFeeBps: number;
}

export interface FeePlanChanges {
  provider_bps?: number;
  payer_fee?: number;
  tof_bps?: number;
  tte_bps?: number;
  revenue_model?: RevenueModel;
  margin_bps?: number;
  payout_fee_flat?: number;
  payout_fee_bps?: number;
}

const COLUMNS = [
  'business_id',
  'provider_bps',
  'payer_fee',
  'tof_bps',
  'tte_bps',
  'revenue_model',
  'margin_bps',
  'payout_fee_flat',
  'payout_fee_bps',
] as const;

function view(row: {
  business_id: string;
  provider_bps: number;
  payer_fee: number;
  tof_bps: number;
  tte_bps: number;
  revenue_model: RevenueModel;
  margin_bps: number;
  payout_fee_flat: number;
  payout_fee_bps: number;
}): FeePlanView {
  return {
    businessId: row.business_id,
    providerBps: row.provider_bps,
    payerFee: row.payer_fee,
    tofBps: row.tof_bps,
    tteBps: row.tte_bps,
    revenueModel: row.revenue_model,
    marginBps: row.margin_bps,
    payoutFeeFlat: row.payout_fee_flat,
    payoutFeeBps: row.payout_fee_bps,
  };
}

/** Changes a business's fee plan; payments made before keep the fees they were charged. */
export async function setFeePlan(db: Executor, businessId: string, changes: FeePlanChanges): Promise<FeePlanView> {
  const exists = await db.selectFrom('businesses').select('id').where('id', '=', businessId).executeTakeFirst();
  if (!exists) throw new ApiError('NOT_FOUND', `No business ${businessId}.`);
  const row = await db
    .insertInto('fee_plans')
    .values({ business_id: businessId, ...changes })
    .onConflict((conflict) => conflict.column('business_id').doUpdateSet({ ...changes, updated_at: sql<Date>`now()` }))
    .returning([...COLUMNS])
    .executeTakeFirstOrThrow();
  return view(row);
}

export async function getFeePlan(db: Executor, businessId: string): Promise<FeePlanView> {
  const row = await db
    .selectFrom('fee_plans')
    .select([...COLUMNS])
    .where('business_id', '=', businessId)
    .executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND', `No fee plan for business ${businessId}.`);
  return view(row);
}

/** The part of a business's fee plan a payout needs (the defaults when it has no plan row). */
export async function payoutFeePlan(db: Executor, businessId: string): Promise<PayoutFeePlan> {
  const row = await db
    .selectFrom('fee_plans')
    .select(['payout_fee_flat', 'payout_fee_bps', 'tof_bps', 'tte_bps'])
    .where('business_id', '=', businessId)
    .executeTakeFirst();
  const taxes = feePlanFromColumns(undefined);
  return {
    payoutFeeFlat: row?.payout_fee_flat ?? 0,
    payoutFeeBps: row?.payout_fee_bps ?? 0,
    tofBps: row?.tof_bps ?? taxes.tofBps,
    tteBps: row?.tte_bps ?? taxes.tteBps,
  };
}
