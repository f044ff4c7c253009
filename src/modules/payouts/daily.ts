import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Caller } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { recordAudit, SYSTEM_ACTOR } from '../audit/record.js';
import { payoutFeePlan } from '../payments/fee-plans.js';
import { payoutFee, type PayoutFeePlan } from '../payments/fees.js';
import { lockPayoutBalance } from '../payments/payouts.js';
import { createPayout, type PayoutLimits } from './service.js';

/** The UTC day of an instant, 'YYYY-MM-DD': the day a daily payout is for. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * Refusals that say "not now" rather than "never": the seller's balance moved between the task's
 * read and the payout's lock (a refund), or the sandbox business has too many payouts waiting.
 * The day is not taken; the next run tries again.
 */
const RETRY_LATER = new Set(['INSUFFICIENT_FUNDS', 'TOO_MANY_PENDING_PAYOUTS']);

/**
 * The largest amount whose amount + fee fits in `available`, on this payout fee plan (a flat fee
 * and a rate rounded up, fees.ts), at most `maxAmount`; 0 when none does. The estimate is exact
 * up to the rate's rounding, which the two walks settle.
 */
export function wholeBalanceAmount(available: number, plan: PayoutFeePlan, maxAmount: number): number {
  if (available <= plan.payoutFeeFlat) return 0;
  const fits = (amount: number) => amount + payoutFee(amount, plan) <= available;
  let amount = Number((BigInt(available - plan.payoutFeeFlat) * 10_000n) / BigInt(10_000 + plan.payoutFeeBps));
  while (amount > 0 && !fits(amount)) amount--;
  while (fits(amount + 1)) amount++;
  return Math.min(amount, maxAmount);
}

type DayOutcome = 'paid' | 'skipped' | 'taken';

/**
 * One seller's day, in the caller's transaction. The day's row is claimed first (its primary key:
 * another worker or an earlier run that took it makes this one do nothing), then the seller's
 * account is locked and read, then the whole balance less the fee is paid through `createPayout`,
 * the code of `POST /payouts` with `seller` (its reservation, events and balance transactions).
 * A balance that cannot cover the fee and leave more than 0, a negative one included, records the
 * day as skipped.
 */
async function payDay(trx: Transaction<DB>, sellerId: string, day: string, limits: PayoutLimits): Promise<DayOutcome> {
  // Read again in the transaction: a PATCH to MANUAL or DISABLED since the search wins.
  const seller = await trx
    .selectFrom('sellers')
    .select(['id', 'business_id', 'environment'])
    .where('id', '=', sellerId)
    .where('payout_schedule', '=', 'DAILY')
    .where('status', '=', 'ACTIVE')
    .executeTakeFirst();
  if (!seller) return 'taken';
  const claimed = await sql<{ seller_id: string }>`
    INSERT INTO seller_payout_days (seller_id, day, payout_reference, created_at)
    VALUES (${seller.id}, ${day}::date, NULL, ${new Date()})
    ON CONFLICT (seller_id, day) DO NOTHING
    RETURNING seller_id`.execute(trx);
  if (claimed.rows.length === 0) return 'taken';

  const caller: Caller = { businessId: seller.business_id, environment: seller.environment };
  const available = await lockPayoutBalance(trx, { ...caller, seller: seller.id });
  const plan = await payoutFeePlan(trx, seller.business_id);
  const amount = wholeBalanceAmount(available, plan, limits.maxAmount);
  if (amount < 1) return 'skipped';
  const payout = await createPayout(
    trx,
    caller,
    { amount, seller: seller.id, description: `Daily payout ${day}`, metadata: { payout_schedule: 'DAILY', day } },
    limits,
  );
  await trx
    .updateTable('seller_payout_days')
    .set({ payout_reference: payout.reference })
    .where('seller_id', '=', seller.id)
    .where(sql<boolean>`day = ${day}::date`)
    .execute();
  await recordAudit(trx, {
    ...caller,
    action: 'payout.created',
    actor: SYSTEM_ACTOR('daily seller payouts'),
    target: { kind: 'payout', id: payout.reference },
    details: { amount: payout.amount, fee: payout.fee, seller: seller.id },
  });
  return 'paid';
}

export interface DailyPayoutsOptions {
  /** The instant whose UTC day is paid (tests drive the day through it); now by default. */
  now?: Date;
  /** Sellers read per page of the search. */
  batchSize?: number;
}

/**
 * Worker task 'seller-payouts' (leased, every minute; decision 082): once per UTC day, each ACTIVE
 * DAILY seller that has no row for the day yet is paid its whole available balance less the
 * payout fee, or skipped for the day when that leaves nothing. Each seller in a transaction of its
 * own: one that fails holds up no other, and, its day not taken, is tried again at the next run.
 */
export async function payDailySellers(
  db: Kysely<DB>,
  limits: PayoutLimits,
  options: DailyPayoutsOptions = {},
): Promise<{ paid: number; skipped: number; later: number }> {
  const day = utcDay(options.now ?? new Date());
  const batchSize = options.batchSize ?? 500;
  const counts = { paid: 0, skipped: 0, later: 0 };
  const failed: string[] = [];
  let after = '';
  for (;;) {
    const page = await db
      .selectFrom('sellers as s')
      .select('s.id')
      .where('s.payout_schedule', '=', 'DAILY')
      .where('s.status', '=', 'ACTIVE')
      .where('s.id', '>', after)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('seller_payout_days as d')
              .select('d.seller_id')
              .whereRef('d.seller_id', '=', 's.id')
              .where(sql<boolean>`d.day = ${day}::date`),
          ),
        ),
      )
      .orderBy('s.id')
      .limit(batchSize)
      .execute();
    for (const { id } of page) {
      try {
        const outcome = await db.transaction().execute((trx) => payDay(trx, id, day, limits));
        if (outcome !== 'taken') counts[outcome]++;
      } catch (error) {
        if (error instanceof ApiError && RETRY_LATER.has(error.code)) counts.later++;
        else failed.push(`${id} (${error instanceof Error ? error.message : String(error)})`);
      }
    }
    if (page.length < batchSize) break;
    after = page[page.length - 1]!.id;
  }
  if (failed.length > 0) {
    throw new Error(
      `seller payouts of ${day}: paid ${counts.paid}; could not pay ${failed.length}: ${failed.slice(0, 5).join(', ')}`,
    );
  }
  return counts;
}
