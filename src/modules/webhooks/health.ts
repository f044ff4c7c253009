import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { WebhookNotice } from '../events/catalog.js';
import { eventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { endWaitingDeliveries } from './delivery/end-waiting.js';
import { NEW_STATUS } from './delivery-state.js';

/**
 * Sent to the business's endpoints (no subscription needed, like `ping`) about one of them: the
 * entry of the catalogue's WEBHOOK_NOTICES (a name not in it does not compile).
 */
export const ENDPOINT_DISABLED_EVENT = 'endpoint.disabled' satisfies WebhookNotice;

export interface AutoDisableSettings {
  /** Every attempt failed for this long: the endpoint is disabled. */
  disableAfterHours: number;
  /** The warning goes out this long before; the endpoint is never disabled sooner after it. */
  warningHours: number;
}

type EndpointRow = Selectable<DB['webhook_endpoints']>;

/**
 * Writes `endpoint.disabled` in the caller's transaction, with one delivery to every active
 * endpoint of the business and environment plus the endpoint it is about (whose delivery the
 * disable then ends DEAD: it shows in that endpoint's log and goes out if recovered).
 */
async function recordEndpointEvent(
  trx: Transaction<DB>,
  endpoint: EndpointRow,
  data: { disabled: boolean; disableAt: Date },
): Promise<void> {
  const record = eventRecord(
    ENDPOINT_DISABLED_EVENT,
    { businessId: endpoint.business_id, environment: endpoint.environment },
    endpoint.id,
    {
      endpointId: endpoint.id,
      url: endpoint.url,
      disabled: data.disabled,
      reason: 'FAILING',
      failingSince: endpoint.failing_since?.toISOString() ?? null,
      disableAt: data.disableAt.toISOString(),
    },
  );
  await unitOfWork().events([record], { fanOut: false }).run(trx);
  await sql`
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id, business_id, environment, event, status,
      next_attempt_at, created_at, updated_at)
    SELECT 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ${record.id}, e.id, e.business_id, e.environment,
      ${record.event}, ${sql.lit(NEW_STATUS)}, ${record.createdAt}, ${record.createdAt}, ${record.createdAt}
    FROM webhook_endpoints e
    WHERE e.business_id = ${endpoint.business_id} AND e.environment = ${endpoint.environment}
      AND e.deleted_at IS NULL AND (e.active OR e.id = ${endpoint.id})`.execute(trx);
}

/**
 * One endpoint, under its row lock: the warning once its failing run is `after - warning` old,
 * then the disable once the run is `after` old and the warning at least `warning` old (so the
 * warning always comes first, by the full notice, even after the worker was down). Disabling ends
 * the endpoint's waiting deliveries DEAD (ENDPOINT_DISABLED): re-enabled, it gets new events only
 * until they are recovered.
 */
async function checkEndpoint(
  db: Kysely<DB>,
  id: string,
  settings: AutoDisableSettings,
): Promise<'warned' | 'disabled' | 'warned+disabled' | null> {
  const afterMs = settings.disableAfterHours * 3_600_000;
  const warningMs = settings.warningHours * 3_600_000;
  return db.transaction().execute(async (trx) => {
    const endpoint = await trx
      .selectFrom('webhook_endpoints')
      .selectAll()
      .select(sql<Date>`now()`.as('db_now'))
      .where('id', '=', id)
      .where('active', '=', true)
      .where('deleted_at', 'is', null)
      .where('failing_since', 'is not', null)
      // NO KEY: an outcome being written holds its delivery and takes KEY SHARE on the endpoint
      // (its rollup's foreign key). Under FOR UPDATE that would wait for this transaction while
      // this one waits for the delivery below: a deadlock.
      .forNoKeyUpdate()
      .executeTakeFirst();
    if (!endpoint?.failing_since) return null;
    const now = endpoint.db_now.getTime();
    const failingFor = now - endpoint.failing_since.getTime();
    let warnedAt = endpoint.disable_warned_at?.getTime() ?? null;
    let result: 'warned' | null = null;
    if (warnedAt === null) {
      if (failingFor < afterMs - warningMs) return null;
      // Warned on time, the run reaches `after` just as the notice ends; warned late (the worker
      // was down), the notice still runs in full.
      const disableAt = new Date(Math.max(endpoint.failing_since.getTime() + afterMs, now + warningMs));
      await recordEndpointEvent(trx, endpoint, { disabled: false, disableAt });
      await trx
        .updateTable('webhook_endpoints')
        .set({ disable_warned_at: endpoint.db_now })
        .where('id', '=', id)
        .execute();
      warnedAt = now;
      result = 'warned';
    }
    if (failingFor < afterMs || now - warnedAt < warningMs) return result;

    await trx
      .updateTable('webhook_endpoints')
      .set({
        active: false,
        disabled_at: endpoint.db_now,
        disabled_reason: 'FAILING',
        updated_at: endpoint.db_now,
      })
      .where('id', '=', id)
      .execute();
    await recordEndpointEvent(trx, { ...endpoint, active: false }, { disabled: true, disableAt: endpoint.db_now });
    await endWaitingDeliveries(trx, id, {
      cause: 'endpointDisabled',
      lastError: `endpoint disabled: every attempt failed since ${endpoint.failing_since.toISOString()}`,
    });
    return result ? 'warned+disabled' : 'disabled';
  });
}

/** Periodic: warns about, then disables, endpoints whose every attempt has been failing. */
export async function checkFailingEndpoints(
  db: Kysely<DB>,
  settings: AutoDisableSettings,
): Promise<{ warned: number; disabled: number }> {
  const warnAfterSeconds = Math.max(0, settings.disableAfterHours - settings.warningHours) * 3600;
  const candidates = await db
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('active', '=', true)
    .where('deleted_at', 'is', null)
    .where('failing_since', '<=', sql<Date>`now() - make_interval(secs => ${warnAfterSeconds})`)
    .orderBy('failing_since')
    .limit(500)
    .execute();
  let warned = 0;
  let disabled = 0;
  for (const { id } of candidates) {
    const result = await checkEndpoint(db, id, settings);
    if (result === 'warned' || result === 'warned+disabled') warned += 1;
    if (result === 'disabled' || result === 'warned+disabled') disabled += 1;
  }
  return { warned, disabled };
}
