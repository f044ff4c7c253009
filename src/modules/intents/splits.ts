import type { AmountType, FeeBearer, SplitLineRecord, SplitRecord, SplitShareRecord } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { invalid } from '../../http/errors.js';
import { feePlanFromColumns, paymentCommission } from '../payments/fees.js';
import { lineGross, splitRoom, splitShares, type SplitShare } from '../payments/splits.js';
import { refuseDisabled, visibleSellers } from '../sellers/lookup.js';
import type { IntentRow } from './repo.js';

/**
 * An intent's split between the business's sellers (decision 080): the create's checks, the
 * shares a payment gives, and how the intent shows them. The money is the payments module's
 * (payments/splits.ts and the settlement plan).
 */

export const MAX_SPLIT_LINES = 10;

/** A split as the create's body gives it. */
export type SplitInput = ({ seller: string; amount: number } | { seller: string; bps: number })[];

/** A split as the intent's view shows it: the shares once paid, what was asked before. */
export type SplitView = SplitShareRecord[] | SplitLineRecord[];

const field = (index: number, name?: string) => `body.splits[${index}]${name ? `.${name}` : ''}`;

/** The lines' own checks: amounts or rates (one kind per split; rates only for an OPEN intent), no seller twice. */
function checkLines(lines: SplitInput, amountType: AmountType): SplitLineRecord[] {
  if (lines.length < 1 || lines.length > MAX_SPLIT_LINES) {
    throw invalid('body.splits', `must have 1 to ${MAX_SPLIT_LINES} lines`);
  }
  const byAmount = 'amount' in lines[0]!;
  const seen = new Set<string>();
  return lines.map((line, index) => {
    if (seen.has(line.seller)) throw invalid(field(index, 'seller'), `names seller ${line.seller} twice`);
    seen.add(line.seller);
    if ('amount' in line) {
      if (amountType === 'OPEN') throw invalid(field(index, 'amount'), 'is not allowed: an OPEN intent splits by bps');
      if (!byAmount) throw invalid(field(index, 'amount'), 'cannot be mixed with bps in one split');
      if (!Number.isSafeInteger(line.amount) || line.amount < 1) {
        throw invalid(field(index, 'amount'), 'must be a positive integer of centimes');
      }
      return { seller: line.seller, amount: line.amount };
    }
    if (byAmount) throw invalid(field(index, 'bps'), 'cannot be mixed with amounts in one split');
    if (!Number.isSafeInteger(line.bps) || line.bps < 1 || line.bps > 10_000) {
      throw invalid(field(index, 'bps'), 'must be between 1 and 10000');
    }
    return { seller: line.seller, bps: line.bps };
  });
}

/** Each seller the split names is the caller's, in its environment (sellers/lookup.ts), and ACTIVE. */
async function checkSellers(db: Executor, caller: Caller, lines: readonly SplitLineRecord[]): Promise<void> {
  const named = lines.map((line, index) => ({ id: line.seller, field: field(index, 'seller') }));
  const sellers = await visibleSellers(db, caller, named);
  sellers.forEach((seller, index) =>
    refuseDisabled(seller, named[index]!.field, 'it takes no new split. Nothing was created.'),
  );
}

/**
 * The sum fits what the payment leaves after the fees it bears: on a FIXED intent, the gross
 * shares against the amount (less the provider fee when the business bears it); on an OPEN one,
 * whose amount is the payer's, the rates against 10,000 bps less the provider rate when the
 * business bears the fee (then no amount can make the shares pass what is left).
 */
async function checkSum(
  db: Executor,
  caller: Caller,
  lines: readonly SplitLineRecord[],
  feeBearer: FeeBearer,
  amount: number | null,
): Promise<void> {
  const bps = lines.reduce((total, line) => total + ('bps' in line ? line.bps : 0), 0);
  if (bps > 10_000) throw invalid('body.splits', `asks for ${bps} bps in all, more than 10000`);
  const plan = feePlanFromColumns(
    await db
      .selectFrom('fee_plans')
      .select(['provider_bps', 'payer_fee', 'tof_bps', 'tte_bps', 'revenue_model', 'margin_bps'])
      .where('business_id', '=', caller.businessId)
      .executeTakeFirst(),
  );
  if (amount === null) {
    const most = feeBearer === 'BUSINESS' ? 10_000 - plan.providerBps : 10_000;
    if (bps > most) {
      throw invalid('body.splits', `asks for ${bps} bps in all; with the business bearing the fee, at most ${most}`);
    }
    return;
  }
  const room = splitRoom(amount, paymentCommission(amount, plan).provider_ttc, feeBearer);
  let sum = 0;
  lines.forEach((line, index) => {
    sum += lineGross(line, amount);
    if (sum > room) {
      throw invalid(
        'amount' in line ? field(index, 'amount') : 'body.splits',
        `brings the sellers' shares to ${sum} centimes, more than the ${room} left after the fees the payment bears`,
      );
    }
  });
}

/**
 * The create's split checked, before anything is written: undefined without one. `feeBearer`
 * alone is refused (it bears on a split).
 */
export async function checkSplit(
  db: Executor,
  caller: Caller,
  input: { splits?: SplitInput | undefined; feeBearer?: FeeBearer | undefined },
  amountType: AmountType,
  amount: number | null,
): Promise<SplitRecord | undefined> {
  if (input.splits === undefined) {
    if (input.feeBearer !== undefined) throw invalid('body.feeBearer', 'needs body.splits');
    return undefined;
  }
  const feeBearer = input.feeBearer ?? 'BUSINESS';
  const lines = checkLines(input.splits, amountType);
  await checkSellers(db, caller, lines);
  await checkSum(db, caller, lines, feeBearer, amountType === 'FIXED' ? amount : null);
  return { fee_bearer: feeBearer, lines };
}

/** What a payment of `amount` with provider fee `providerFee` gives each seller of the intent's split. */
export function sharesOf(
  intent: Pick<IntentRow, 'split'>,
  amount: number,
  providerFee: number,
): SplitShare[] | undefined {
  const split = intent.split;
  return split ? splitShares(amount, providerFee, split.fee_bearer, split.lines) : undefined;
}

/** The intent's view of its split: nothing without one; the shares once paid, what was asked before. */
export function splitView(
  intent: Pick<IntentRow, 'split' | 'split_shares'>,
): { splits: SplitView; feeBearer: FeeBearer } | Record<string, never> {
  if (!intent.split) return {};
  return { splits: intent.split_shares ?? intent.split.lines, feeBearer: intent.split.fee_bearer };
}
