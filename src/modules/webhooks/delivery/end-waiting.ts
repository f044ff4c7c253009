import { sql, type Transaction } from 'kysely';
import type { DB } from '../../../db/schema.js';
import { deadReasonOf, deliveryActions, deliveryMachine, type EndpointEnd } from '../delivery-state.js';

/**
 * Ends every waiting delivery of an endpoint DEAD, with the reason of `cause` (`endpointDisabled`,
 * `endpointDeleted`), the caller holding the endpoint's lock. The rows are locked in id order, the
 * order an attempt's outcomes take theirs in, so a batch of outcomes being written meanwhile waits
 * or is waited for, never both. Clearing the lease keeps an attempt in flight from writing its outcome
 * over the end.
 */
export async function endWaitingDeliveries(
  trx: Transaction<DB>,
  endpointId: string,
  end: { cause: EndpointEnd; lastError: string },
): Promise<void> {
  const waiting = deliveryMachine.sqlFilter(end.cause);
  await trx
    .updateTable('webhook_deliveries')
    .set({
      status: deliveryActions[end.cause].to,
      dead_reason: deadReasonOf(end.cause),
      last_error: end.lastError,
      locked_by: null,
      locked_until: null,
      completed_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('endpoint_id', '=', endpointId)
        .where(waiting)
        .orderBy('id')
        .forNoKeyUpdate(),
    )
    .where(waiting)
    .execute();
}
