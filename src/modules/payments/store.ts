import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Environment, PaymentsTable, SettlementLineRecord } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { maskPhone } from '../../lib/phone.js';
import type { Commission } from './fees.js';
import { paymentMachine, type PaymentFailureCode, type PaymentMethodName, type PaymentStatus } from './state.js';

export type PaymentRow = Selectable<PaymentsTable>;

/** What a payment pays: an intent or an order, by its row id. */
export type PaymentSubject = { intentId: number } | { orderId: number };

/**
 * What a new payment pays: as above, or the order its statement inserts (`orderIdOf`: an SQL
 * expression of that statement, such as `(SELECT id FROM changed)`).
 */
export type NewPaymentSubject = PaymentSubject | { orderIdOf: RawBuilder<number> };

/** A payment as it is written: one attempt, with its outcome if it has one yet. */
export interface NewPayment {
  id: string;
  businessId: string;
  environment: Environment;
  subject: NewPaymentSubject;
  method: PaymentMethodName;
  status: PaymentStatus;
  amount: number;
  payerPhone: string | null;
  payerWalletId: string | null;
  commission: Commission | null;
  settlement: SettlementLineRecord[];
  failure: { code: PaymentFailureCode; message: string } | null;
  ledgerTransactionId: string | null;
  createdAt: Date;
}

export const newPaymentId = () => newId('pay');

function rowValues(payment: NewPayment): RawBuilder<unknown> {
  const { subject } = payment;
  const intentId = 'intentId' in subject ? subject.intentId : null;
  const orderId =
    'orderId' in subject ? sql`${subject.orderId}` : 'orderIdOf' in subject ? subject.orderIdOf : sql`${null}`;
  const settledAt = payment.status === 'SUCCEEDED' ? payment.createdAt : null;
  return sql`${payment.id}::text, ${payment.businessId}::text, ${payment.environment}::text, ${intentId}::bigint,
    ${orderId}::bigint, ${payment.method}::text, ${payment.status}::text, ${payment.amount}::bigint,
    ${payment.payerPhone}::text, ${payment.payerWalletId}::text,
    ${payment.commission === null ? null : JSON.stringify(payment.commission)}::jsonb,
    ${JSON.stringify(payment.settlement)}::jsonb, ${payment.failure?.code ?? null}::text,
    ${payment.failure?.message ?? null}::text, ${payment.ledgerTransactionId}::text,
    ${payment.createdAt}::timestamptz, ${settledAt}::timestamptz, ${payment.createdAt}::timestamptz`;
}

const COLUMNS = sql.raw(`id, business_id, environment, intent_id, order_id, method, status, amount, payer_phone,
  payer_wallet_id, commission, settlement, failure_code, failure_message, ledger_transaction_id, created_at,
  settled_at, updated_at`);

/**
 * The payment's row as a statement of the unit of work that makes the change it causes (the
 * intent paid, the order placed), beside its ledger transfer: the attempt, the money and the
 * events in one round trip. A payment of the order the unit inserts follows its change.
 */
export function paymentInsert(payment: NewPayment): RawBuilder<unknown> {
  return sql`INSERT INTO payments (${COLUMNS}) VALUES (${rowValues(payment)})`;
}

/**
 * A payment in a statement of its own, written only while `condition` holds (an attempt refused
 * before the money, such as a wrong PIN, is kept only if its intent could still be paid).
 */
export async function insertPayment(
  executor: Executor,
  payment: NewPayment,
  condition: RawBuilder<boolean> = sql<boolean>`true`,
): Promise<boolean> {
  const result = await sql`INSERT INTO payments (${COLUMNS}) SELECT ${rowValues(payment)} WHERE ${condition}`.execute(
    executor,
  );
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/** The outcome of a payment that waited, as it is written. */
export type PaymentEnding =
  | {
      status: 'SUCCEEDED';
      payerWalletId: string;
      commission: Commission;
      settlement: SettlementLineRecord[];
      ledgerTransactionId: string | null;
      at: Date;
    }
  | { status: 'FAILED'; failure: { code: PaymentFailureCode; message: string }; at: Date };

/**
 * The end of a PROCESSING payment as a statement of the caller's unit of work. It changes the row
 * only while it is PROCESSING; the caller holds it locked (`lockProcessingPayment`), so it does.
 */
export function paymentEnd(id: string, ending: PaymentEnding): RawBuilder<unknown> {
  const set =
    ending.status === 'SUCCEEDED'
      ? sql`status = 'SUCCEEDED', payer_wallet_id = ${ending.payerWalletId}::text,
          commission = ${JSON.stringify(ending.commission)}::jsonb, settlement = ${JSON.stringify(ending.settlement)}::jsonb,
          ledger_transaction_id = ${ending.ledgerTransactionId}::text, settled_at = ${ending.at}::timestamptz`
      : sql`status = 'FAILED', failure_code = ${ending.failure.code}::text,
          failure_message = ${ending.failure.message}::text`;
  const action = ending.status === 'SUCCEEDED' ? 'succeed' : 'fail';
  return sql`UPDATE payments SET ${set}, updated_at = ${ending.at}::timestamptz
    WHERE id = ${id} AND ${paymentMachine.sqlFilter(action)}`;
}

/** A PROCESSING payment, locked; undefined once it has ended. */
export async function lockProcessingPayment(executor: Executor, id: string): Promise<PaymentRow | undefined> {
  const result = await sql<PaymentRow>`
    SELECT * FROM payments WHERE id = ${id} AND ${paymentMachine.sqlFilter('succeed')} FOR UPDATE`.execute(executor);
  return result.rows[0];
}

/**
 * The PROCESSING payments whose answer is due (`due`: a condition on the row `payments`), oldest
 * first: the periodic task's work, read through the partial index of waiting payments.
 */
export async function duePayments(executor: Executor, due: RawBuilder<boolean>, limit: number): Promise<PaymentRow[]> {
  const result = await sql<PaymentRow>`
    SELECT * FROM payments WHERE ${paymentMachine.sqlFilter('succeed')} AND ${due} ORDER BY created_at LIMIT ${limit}`.execute(
    executor,
  );
  return result.rows;
}

/** A payment as the API shows it, with the reference of what it pays. */
export type PaymentViewRow = PaymentRow & { intent_reference: string | null; order_reference: string | null };

const VIEW_SELECT = sql`SELECT p.*, i.reference_number AS intent_reference, o.reference_number AS order_reference
  FROM payments p
  LEFT JOIN payment_intents i ON i.id = p.intent_id
  LEFT JOIN orders o ON o.id = p.order_id`;

/** The API's view of a payment: the payer's phone masked as events mask it. */
export function paymentView(row: PaymentViewRow) {
  return {
    id: row.id,
    intent: row.intent_reference,
    order: row.order_reference,
    method: row.method,
    status: row.status,
    amount: row.amount,
    currency: 'MRU' as const,
    payerPhone: row.payer_phone === null ? null : maskPhone(row.payer_phone),
    commission: row.commission,
    settlement: row.settlement,
    failure: row.failure_code === null ? null : { code: row.failure_code, message: row.failure_message ?? '' },
    sandbox: row.environment === 'test',
    createdAt: row.created_at.toISOString(),
    settledAt: row.settled_at === null ? null : row.settled_at.toISOString(),
  };
}

export type PaymentView = ReturnType<typeof paymentView>;

/** One payment of the caller's, by id: PAYMENT_NOT_FOUND, or SANDBOX_MISMATCH across environments. */
export async function getPayment(executor: Executor, caller: Caller, id: string): Promise<PaymentView> {
  const result = await sql<PaymentViewRow>`${VIEW_SELECT} WHERE p.id = ${id}`.execute(executor);
  const row = result.rows[0];
  if (!row || row.business_id !== caller.businessId) throw new ApiError('PAYMENT_NOT_FOUND');
  if (row.environment !== caller.environment) throw new ApiError('SANDBOX_MISMATCH');
  return paymentView(row);
}

/**
 * A page of the payments of one intent or order, newest first, with their total: the attempts of
 * one subject are few, so the page and its count read the subject's index.
 */
export async function listPayments(
  executor: Executor,
  subject: PaymentSubject,
  page: { limit: number; offset: number },
): Promise<{ items: PaymentView[]; total: number }> {
  const where = 'intentId' in subject ? sql`p.intent_id = ${subject.intentId}` : sql`p.order_id = ${subject.orderId}`;
  const result = await sql<PaymentViewRow & { total: number }>`
    SELECT page.*, (SELECT count(*) FROM payments p WHERE ${where})::int AS total
    FROM (${VIEW_SELECT} WHERE ${where} ORDER BY p.created_at DESC, p.id DESC LIMIT ${page.limit} OFFSET ${page.offset}) page
    RIGHT JOIN (SELECT 1) one ON true`.execute(executor);
  const total = Number(result.rows[0]?.total ?? 0);
  const items = result.rows.filter((row) => row.id !== null).map(paymentView);
  return { items, total };
}
