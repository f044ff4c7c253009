import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { ApiError, type ErrorDetail } from '../../http/errors.js';
import { checkMetadata } from '../../http/metadata.js';
import { newId, randomDigits } from '../../lib/ids.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { payoutFees } from './quote.js';
import {
  lockForPayouts,
  MAX_PAYOUTS_PER_STATEMENT,
  payoutReservation,
  payoutReturned,
  releaseSettled,
} from '../payments/payouts.js';
import { payoutEvent } from './events.js';
import { visibleSeller } from '../sellers/lookup.js';
import { payoutInput, type PayoutInput, type PayoutRequest } from './seller.js';
import { PAYOUT_OPEN_STATUS, payoutMachine, payoutSteps, type PayoutStatus } from './state.js';
import type { PayoutBatchRow, PayoutRow } from './views.js';

export type { PayoutInput } from './seller.js';

const isStringRecord = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((entry) => typeof entry === 'string');

/**
 * The limits of one payout's input the schema cannot say, each problem naming its field under
 * `prefix` (`body.items.3`) with the code a payout of its own gets for it. Only the fields whose
 * shape is right are checked: an amount that is not an integer is the schema's problem.
 */
function limitProblems(item: unknown, prefix: string, maxAmount: number): ErrorDetail[] {
  if (typeof item !== 'object' || item === null) return [];
  const { amount, metadata } = item as { amount?: unknown; metadata?: unknown };
  const problems: ErrorDetail[] = [];
  if (typeof amount === 'number' && Number.isInteger(amount) && (amount < 1 || amount > maxAmount)) {
    const message = `must be between 1 and ${maxAmount} centimes`;
    problems.push({ field: `${prefix}.amount`, message, code: 'AMOUNT_OUT_OF_RANGE' });
  }
  if (isStringRecord(metadata)) {
    try {
      checkMetadata(metadata, `${prefix}.metadata`);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      problems.push(...(error.details ?? []).map((detail) => ({ ...detail, code: error.code })));
    }
  }
  return problems;
}

/** `body.items.3.amount` → 3; undefined for a field that is not inside an item. */
function itemIndexOf(field: string): number | undefined {
  const index = /^body\.items\.([0-9]+)(\.|$)/.exec(field)?.[1];
  return index === undefined ? undefined : Number(index);
}

/**
 * The refusal of a batch naming every bad item at once (decision 072): the schema's problems and
 * the limits' together, each with the code a payout of its own gets for it, ordered by item. A
 * problem of the request as a whole (no `items`, too many, an unknown field) is answered alone.
 */
function batchRefusal(items: readonly unknown[], schemaProblems: readonly ErrorDetail[], maxAmount: number) {
  const byItem = new Map<number, ErrorDetail[]>();
  for (const problem of schemaProblems) {
    const index = itemIndexOf(problem.field)!;
    byItem.set(index, [...(byItem.get(index) ?? []), { ...problem, code: problem.code ?? 'VALIDATION_ERROR' }]);
  }
  items.forEach((item, index) => {
    const problems = limitProblems(item, `body.items.${index}`, maxAmount);
    if (problems.length > 0) byItem.set(index, [...(byItem.get(index) ?? []), ...problems]);
  });
  if (byItem.size === 0) return undefined;
  const bad = [...byItem.keys()].sort((a, b) => a - b);
  return new ApiError(
    'VALIDATION_ERROR',
    `${bad.length} item(s) are invalid: ${bad.map((index) => `items[${index}]`).join(', ')}. Nothing was created.`,
    bad.flatMap((index) => byItem.get(index)!),
  );
}

/**
 * Checks a batch request before anything is written: `schemaError` is what the route's schema
 * found (the route lets the handler run with it), answered alone when it is about the request as
 * a whole, else merged with the limits of every item into one answer.
 */
export function checkBatchRequest(body: unknown, schemaError: ApiError | undefined, maxAmount: number): void {
  const schemaProblems = schemaError?.details ?? [];
  if (schemaError && (schemaProblems.length === 0 || schemaProblems.some((p) => itemIndexOf(p.field) === undefined))) {
    throw schemaError;
  }
  const items = (body as { items: unknown[] }).items;
  const refusal = batchRefusal(items, schemaProblems, maxAmount);
  if (refusal) throw refusal;
}

function newPayoutRow(
  caller: Caller,
  input: PayoutInput,
  fee: number,
  at: Date,
  batch?: { id: string; index: number },
) {
  const reference = `PO-${randomDigits(16)}`;
  return {
    reference,
    business_id: caller.businessId,
    environment: caller.environment,
    batch_id: batch?.id ?? null,
    batch_index: batch?.index ?? null,
    amount: input.amount,
    fee,
    destination_type: input.destination.type,
    destination_phone: input.destination.phone,
    description: input.description ?? '',
    metadata: input.metadata ?? {},
    status: PAYOUT_OPEN_STATUS as PayoutStatus,
    failure_code: null,
    failure_message: null,
    wallet_id: null,
    created_at: at,
    updated_at: at,
    paid_at: null,
    failed_at: null,
    cancelled_at: null,
    seller_id: input.seller ?? null,
  } satisfies PayoutRow;
}

/** What a payout's creation is bounded by: its amount, and the business's sandbox payouts waiting. */
export interface PayoutLimits {
  maxAmount: number;
  /** A business's sandbox payouts PENDING at once, at most (decision 067). */
  maxPendingSandbox: number;
}

/**
 * A sandbox business keeps at most `max` payouts waiting to be sent: beyond, 429
 * TOO_MANY_PENDING_PAYOUTS and nothing written, until the worker has sent enough of them (a live
 * business is bounded by its money). Counted once the merchant's account is locked, so racing
 * creates of the business count each other's payouts.
 */
async function checkPendingSandbox(trx: Transaction<DB>, caller: Caller, adding: number, max: number): Promise<void> {
  if (caller.environment !== 'test') return;
  // Counted no further than the bound needs: at most `max + 1` index entries, however many wait.
  const waiting = trx
    .selectFrom('payouts')
    .select('reference')
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', 'test')
    .where(payoutMachine.sqlFilter('pay'))
    .limit(max + 1);
  const { n } = await trx
    .selectFrom(waiting.as('waiting'))
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  const pending = Number(n);
  if (pending + adding <= max) return;
  // About the time the sender takes for the excess at a modest 200 payouts a second.
  const retryAfter = Math.min(60, Math.max(1, Math.ceil((pending + adding - max) / 200)));
  throw new ApiError(
    'TOO_MANY_PENDING_PAYOUTS',
    `${pending > max ? `Over ${max}` : pending} sandbox payout(s) of this business are waiting to be sent and at most ${max} may wait: ` +
      `${adding} more cannot be created now. Nothing was created; retry after ${retryAfter} s.`,
    undefined,
    { 'Retry-After': String(retryAfter) },
  );
}

/** What the payout's balance transaction keeps of it besides its reference: the merchant's description. */
const balanceDetail = (row: PayoutRow) => (row.description ? { label: row.description } : {});

/**
 * Reserves the money of one payout, or of a batch's, and inserts them with their
 * `payout.created` events, a few hundred a statement, once the merchant's account is locked and
 * covers them all. The first statement also marks the transactions they settle: the payout's, or
 * the batch's as a whole.
 */
async function reserveAndInsert(
  trx: Transaction<DB>,
  caller: Caller,
  rows: readonly PayoutRow[],
  at: Date,
  limits: PayoutLimits,
  batch?: PayoutBatchRow,
): Promise<PayoutRow[]> {
  // One owner per call: a single payout's seller, or the business (a batch pays from its balance).
  const owner = { ...caller, seller: rows[0]!.seller_id };
  await lockForPayouts(
    trx,
    owner,
    rows.reduce((total, row) => total + row.amount + row.fee, 0),
  );
  await checkPendingSandbox(trx, caller, rows.length, limits.maxPendingSandbox);
  // The batch row before its payouts, which refer to it; it settles their transactions as a whole.
  if (batch) await trx.insertInto('payout_batches').values(batch).execute();
  const settledBy = batch?.id ?? rows[0]!.reference;
  const inserted: PayoutRow[] = [];
  for (let start = 0; start < rows.length; start += MAX_PAYOUTS_PER_STATEMENT) {
    const chunk = rows.slice(start, start + MAX_PAYOUTS_PER_STATEMENT);
    const money = chunk.map((row) => ({
      reference: row.reference,
      amount: row.amount,
      fee: row.fee,
      detail: balanceDetail(row),
    }));
    const change = trx
      .insertInto('payouts')
      .values(chunk.map((row) => ({ ...row, metadata: JSON.stringify(row.metadata) })))
      .returningAll();
    inserted.push(
      ...(await unitOfWork()
        .money(payoutReservation(owner, money, start === 0 ? settledBy : undefined, at))
        .change(change)
        .events(chunk.map((row) => payoutEvent('payout.created', row, row.created_at)))
        .run(trx)),
    );
  }
  return inserted;
}

/**
 * Creates a payout in the caller's transaction: its amount and fee reserved from the merchant's
 * balance (or 402 INSUFFICIENT_FUNDS, nothing written), the payout PENDING and `payout.created`.
 * The worker sends it (`send.ts`).
 */
export async function createPayout(
  trx: Transaction<DB>,
  caller: Caller,
  request: PayoutRequest,
  options: PayoutLimits,
): Promise<PayoutRow> {
  const input = await payoutInput(trx, caller, request);
  if (input.amount < 1 || input.amount > options.maxAmount) {
    throw new ApiError('AMOUNT_OUT_OF_RANGE', `amount must be between 1 and ${options.maxAmount} centimes.`);
  }
  checkMetadata(input.metadata ?? {});
  const [fee] = await payoutFees(trx, caller.businessId, [input.amount]);
  const now = new Date();
  const row = newPayoutRow(caller, input, fee!, now);
  const [inserted] = await reserveAndInsert(trx, caller, [row], now, options);
  return inserted!;
}

/**
 * A batch of payouts, all or nothing: every item is checked first (400 naming each bad item,
 * nothing written), then the total of amounts and fees is reserved at once (or 402), then each
 * item becomes its own PENDING payout with its own `payout.created`. The batch as a whole settles
 * the merchant's unsettled transactions.
 */
export async function createPayoutBatch(
  trx: Transaction<DB>,
  caller: Caller,
  items: readonly PayoutInput[],
  options: PayoutLimits,
): Promise<{ batch: PayoutBatchRow; payouts: PayoutRow[] }> {
  const refusal = batchRefusal(items, [], options.maxAmount);
  if (refusal) throw refusal;
  const fees = await payoutFees(
    trx,
    caller.businessId,
    items.map((item) => item.amount),
  );
  const now = new Date();
  const id = newId('pob');
  const rows = items.map((item, index) => newPayoutRow(caller, item, fees[index]!, now, { id, index }));
  const batch: PayoutBatchRow = {
    id,
    business_id: caller.businessId,
    environment: caller.environment,
    item_count: rows.length,
    total_amount: rows.reduce((total, row) => total + row.amount, 0),
    total_fee: rows.reduce((total, row) => total + row.fee, 0),
    created_at: now,
  };
  return { batch, payouts: await reserveAndInsert(trx, caller, rows, now, options, batch) };
}

/** A payout of the caller's, or PAYOUT_NOT_FOUND (SANDBOX_MISMATCH when it is the other environment's). */
async function findPayout(db: Executor, caller: Caller, reference: string, lock: boolean): Promise<PayoutRow> {
  let query = db
    .selectFrom('payouts')
    .selectAll()
    .where('reference', '=', reference)
    .where('business_id', '=', caller.businessId);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (row && row.environment === caller.environment) return row;
  if (row) throw new ApiError('SANDBOX_MISMATCH');
  throw new ApiError('PAYOUT_NOT_FOUND', `No payout ${reference}.`);
}

export function getPayout(db: Kysely<DB>, caller: Caller, reference: string): Promise<PayoutRow> {
  return findPayout(db, caller, reference, false);
}

/**
 * Cancels a PENDING payout: its money back to the merchant (`payout_reversal`), CANCELLED and
 * `payout.cancelled` in one statement. The row lock makes it wait for a worker sending it, which
 * then leaves it PAID or FAILED: PAYOUT_NOT_PENDING.
 */
export async function cancelPayout(trx: Transaction<DB>, caller: Caller, reference: string): Promise<PayoutRow> {
  const payout = await findPayout(trx, caller, reference, true);
  const to = payoutMachine.assert(payout, 'cancel');
  const now = new Date();
  const { event } = payoutSteps.cancel;
  const changed: PayoutRow = { ...payout, status: to, cancelled_at: now, updated_at: now };
  const money = payoutReturned(
    {
      environment: payout.environment,
      businessId: payout.business_id,
      reference,
      amount: payout.amount,
      fee: payout.fee,
      sellerId: payout.seller_id,
    },
    'cancelled',
    now,
  );
  const [row] = await unitOfWork()
    .money(money)
    .change(
      trx
        .updateTable('payouts')
        .set({ status: to, cancelled_at: now, updated_at: now })
        .where('reference', '=', reference)
        .returningAll(),
    )
    .events([payoutEvent(event, changed, now)])
    .run(trx);
  if (!payout.batch_id) await releaseSettled(trx, reference);
  return row!;
}

export interface PayoutFilters {
  status?: PayoutStatus | undefined;
  batch?: string | undefined;
  /** A seller's payouts (decision 082): looked up as everywhere (sellers/lookup.ts). */
  seller?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** A page of the caller's payouts, newest first (a batch's in their item order), with the total. */
export async function listPayouts(
  db: Kysely<DB>,
  caller: Caller,
  query: PayoutFilters & { limit: number; offset: number },
): Promise<{ items: PayoutRow[]; total: number }> {
  if (query.from && query.to && query.from > query.to) {
    throw new ApiError('VALIDATION_ERROR', 'query.from is after query.to.', [
      { field: 'query.from', message: 'is after query.to' },
    ]);
  }
  if (query.seller !== undefined) await visibleSeller(db, caller, query.seller, 'query.seller');
  let rows = db
    .selectFrom('payouts')
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment);
  if (query.status) rows = rows.where('status', '=', query.status);
  if (query.batch) rows = rows.where('batch_id', '=', query.batch);
  if (query.seller !== undefined) rows = rows.where('seller_id', '=', query.seller);
  if (query.from) rows = rows.where('created_at', '>=', query.from);
  if (query.to) rows = rows.where('created_at', '<=', query.to);
  const ordered = query.batch
    ? rows.selectAll().orderBy('batch_index', 'asc')
    : rows.selectAll().orderBy('created_at', 'desc').orderBy('reference', 'desc');
  const [items, count] = await Promise.all([
    ordered.limit(query.limit).offset(query.offset).execute(),
    rows.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: Number(count.n) };
}

/** A batch of the caller's with its payouts counted by status. */
export async function getPayoutBatch(
  db: Kysely<DB>,
  caller: Caller,
  id: string,
): Promise<{ batch: PayoutBatchRow; counts: Partial<Record<PayoutStatus, number>> }> {
  const batch = await db
    .selectFrom('payout_batches')
    .selectAll()
    .where('id', '=', id)
    .where('business_id', '=', caller.businessId)
    .executeTakeFirst();
  if (!batch) throw new ApiError('PAYOUT_BATCH_NOT_FOUND', `No payout batch ${id}.`);
  if (batch.environment !== caller.environment) throw new ApiError('SANDBOX_MISMATCH');
  const counted = await db
    .selectFrom('payouts')
    .select(['status', sql<number>`count(*)`.as('n')])
    .where('batch_id', '=', id)
    .groupBy('status')
    .execute();
  return { batch, counts: Object.fromEntries(counted.map((row) => [row.status, Number(row.n)])) };
}

/**
 * The balance transactions a payout settles (decisions "Payouts"): those that no payout settled
 * yet when it was created, set aside for it then (for an item of a batch, the batch's), newest
 * first. A failed or cancelled single payout gives them back to the next payout.
 */
export async function payoutTransactions(
  db: Kysely<DB>,
  caller: Caller,
  reference: string,
  page: { limit: number; offset: number },
) {
  const payout = await getPayout(db, caller, reference);
  const settledBy = payout.batch_id ?? payout.reference;
  const rows = db
    .selectFrom('balance_transactions')
    .where('settled_by', '=', settledBy)
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment);
  const [items, count] = await Promise.all([
    rows
      .selectAll()
      // The order the balance took them (decision 086), as every balance list.
      .orderBy('applied_order', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    rows.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { payout, items, total: Number(count.n) };
}
