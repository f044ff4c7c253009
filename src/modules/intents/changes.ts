import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { EventRecord } from '../events/outbox.js';
import { unitOfWork, type UnitOfWork } from '../events/unit-of-work.js';
import { paymentEvent } from './events.js';
import { pendingRequestsOf, withdrawRequests } from './request-ends.js';
import type { IntentRow } from './repo.js';
import { intentActions, isAllowed } from './state.js';

/**
 * Expiry, by the timer or by `simulate-expiry`, of intents locked by the caller: CANCELLED with
 * its reason stored, code freed, `payment.expired`.
 */
export async function expireIntents(trx: Transaction<DB>, intents: IntentRow[], now: Date): Promise<IntentRow[]> {
  const due = intents.filter((intent) => isAllowed(intent, 'expire', now));
  if (due.length === 0) return [];
  const change = {
    status: intentActions.expire.to,
    cancel_reason: 'expiry',
    payment_code: null,
    updated_at: now,
  } as const;
  // Their pending requests can no longer be paid: they end EXPIRED in the same statement.
  const requests = await pendingRequestsOf(
    trx,
    due.map((intent) => intent.id),
  );
  const expired = await withdrawRequests(unitOfWork(), requests, 'TIMED_OUT', now)
    .change(
      trx
        .updateTable('payment_intents')
        .set(change)
        .where(
          'id',
          'in',
          due.map((intent) => intent.id),
        )
        .returningAll(),
    )
    .events(due.map((intent) => paymentEvent('payment.expired', { ...intent, ...change }, now)))
    .run(trx);
  // The events were built for every due intent: the caller's locks make each of them change.
  if (expired.length !== due.length) throw new Error(`${due.length - expired.length} due intents were not expired`);
  return expired;
}

/**
 * One intent's change and its events, in one statement, with what else the statement writes if
 * anything (`unit`: the ledger transfer that pays it, its payment's row). The caller holds the
 * intent's row locked, so the row the change leaves is the one read plus
 * the change: the events are built from it, and it is the answer (no row to read back). A change
 * of anything a trigger or default would rewrite does not belong here.
 */
export async function changeIntent(
  trx: Transaction<DB>,
  intent: IntentRow,
  // Columns whose written value is the value read back (metadata and the split are written as
  // JSON text; a payment writes the split's shares, as JSON here).
  change: Partial<Omit<IntentRow, 'id' | 'metadata' | 'split'>>,
  events: (changed: IntentRow) => EventRecord[],
  unit: UnitOfWork = unitOfWork(),
): Promise<IntentRow> {
  const changed: IntentRow = { ...intent, ...change };
  const { split_shares: shares, ...columns } = change;
  const set = shares === undefined ? columns : { ...columns, split_shares: shares && JSON.stringify(shares) };
  const rows = await unit
    .change(trx.updateTable('payment_intents').set(set).where('id', '=', intent.id).returning('id'))
    .events(events(changed))
    .run(trx);
  if (rows.length !== 1) throw new Error(`intent ${intent.id} was not changed`);
  return changed;
}
