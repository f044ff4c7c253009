import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { DB, EndpointDisabledReason, Environment, WebhookEndpointsTable } from '../../db/schema.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { eventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { endWaitingDeliveries } from './delivery/end-waiting.js';
import { NEW_STATUS } from './delivery-state.js';
import { newEndpointSecret, type SignatureScheme } from './signing.js';
import { checkEndpointScopes, type EndpointAction } from './scopes.js';
import { isPublicAddress, resolveAll } from './ssrf.js';
import type { ScopedCaller } from '../../http/context.js';

export const MAX_ENDPOINTS = 5;
/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

type EndpointRow = Selectable<WebhookEndpointsTable>;

export interface EndpointView {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  sandbox: boolean;
  signatureScheme: SignatureScheme;
  maxPerSecond: number | null;
  failingSince: string | null;
  disabledAt: string | null;
  disabledReason: EndpointDisabledReason | null;
  secret?: string;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function endpointView(row: EndpointRow, options: { withSecret?: boolean } = {}): EndpointView {
  const overlap = row.previous_secret_expires_at && row.previous_secret_expires_at > new Date();
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    active: row.active,
    sandbox: row.environment === 'test',
    signatureScheme: row.signature_scheme,
    maxPerSecond: row.max_per_second,
    failingSince: row.failing_since?.toISOString() ?? null,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    disabledReason: row.disabled_reason,
    ...(options.withSecret ? { secret: row.secret } : {}),
    previousSecretExpiresAt: overlap ? row.previous_secret_expires_at!.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Whether plain http and local addresses are allowed: a development setting, never for live. */
export function allowsPrivate(environment: Environment, webhookAllowPrivate: boolean): boolean {
  return webhookAllowPrivate && environment === 'test';
}

// Named in the message: a developer trying a local receiver with a sandbox key learns the switch.
const DEVELOPMENT_HINT =
  ' For development, WEBHOOK_ALLOW_PRIVATE=true on the server lets sandbox (test key) endpoints use http:// and local addresses; live endpoints never.';

function invalidUrl(reason: string, hint = false): ApiError {
  return new ApiError('INVALID_WEBHOOK_URL', `The webhook URL ${reason}.${hint ? DEVELOPMENT_HINT : ''}`);
}

/** decisions.md: https, well formed, and resolving only to public addresses (checked again at every delivery). */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidUrl('is not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    throw invalidUrl('must use https', true);
  let addresses: string[];
  try {
    addresses = await resolveAll(url.hostname);
  } catch {
    throw invalidUrl(`host ${url.hostname} could not be resolved`);
  }
  if (addresses.length === 0) throw invalidUrl(`host ${url.hostname} could not be resolved`);
  const internal = addresses.find((address) => !isPublicAddress(address));
  if (internal && !allowPrivate) {
    throw invalidUrl(`resolves to ${internal}: private, loopback, link-local and metadata addresses are refused`, true);
  }
  return raw;
}

export { checkEvents } from './scopes.js';

export function findEndpoint(db: Kysely<DB> | Transaction<DB>, caller: ScopedCaller, id: string) {
  return selectEndpoint(db, caller, id, false);
}

/**
 * The endpoint, locked until the transaction ends, before `action` (an edit, a delete, a rotation,
 * a recover): EVENTS_NOT_PERMITTED unless the key may subscribe to all of its events.
 */
export async function lockEndpoint(trx: Transaction<DB>, caller: ScopedCaller, id: string, action: EndpointAction) {
  const row = await selectEndpoint(trx, caller, id, true);
  checkEndpointScopes(row, caller, action);
  return row;
}

async function selectEndpoint(db: Kysely<DB> | Transaction<DB>, caller: ScopedCaller, id: string, lock: boolean) {
  let query = db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment)
    .where('deleted_at', 'is', null);
  // Not FOR UPDATE: the id never changes, so the KEY SHARE lock an attempt's outcome takes on its
  // endpoint (the foreign key of its rollup) need not wait for an edit or a delete of it.
  if (lock) query = query.forNoKeyUpdate();
  const row = await query.executeTakeFirst();
  if (!row) {
    // api.md 5 rule 4: the business's endpoint in the other environment is a mismatch, not missing.
    const where = { column: 'id', value: id, softDeleted: true } as const;
    if (await inOtherEnvironment(db, 'webhook_endpoints', where, caller)) throw new ApiError('SANDBOX_MISMATCH');
    throw new ApiError('ENDPOINT_NOT_FOUND', 'No webhook endpoint with this id.');
  }
  return row;
}

/** `input` has been through checkEvents and checkWebhookUrl (DNS stays out of transactions). */
export async function createEndpoint(
  trx: Transaction<DB>,
  caller: ScopedCaller,
  input: { url: string; events: string[]; signatureScheme?: SignatureScheme; maxPerSecond?: number | null },
): Promise<EndpointView> {
  // Creates for one business wait for each other here, so five is five even under a race. No key
  // update: the write's idempotency claim already holds a key-share lock on this row.
  await trx.selectFrom('businesses').select('id').where('id', '=', caller.businessId).forNoKeyUpdate().execute();
  const { count } = await trx
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('business_id', '=', caller.businessId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  // api.md 4.3 and 8: five per business, sandbox and live together.
  if (Number(count) >= MAX_ENDPOINTS) {
    throw new ApiError(
      'MAX_ENDPOINTS_REACHED',
      `A business may have at most ${MAX_ENDPOINTS} webhook endpoints, sandbox and live together.`,
    );
  }
  const row = await trx
    .insertInto('webhook_endpoints')
    .values({
      id: newId('we'),
      business_id: caller.businessId,
      environment: caller.environment,
      url: input.url,
      events: input.events,
      signature_scheme: input.signatureScheme ?? 'commerce',
      max_per_second: input.maxPerSecond ?? null,
      secret: newEndpointSecret(input.signatureScheme ?? 'commerce'),
      previous_secret: null,
      previous_secret_expires_at: null,
      deleted_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return endpointView(row, { withSecret: true });
}

export async function listEndpoints(db: Kysely<DB>, caller: ScopedCaller, window: { limit: number; offset: number }) {
  const base = db
    .selectFrom('webhook_endpoints')
    .where('business_id', '=', caller.businessId)
    .where('environment', '=', caller.environment)
    .where('deleted_at', 'is', null);
  const [rows, total] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(window.limit)
      .offset(window.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map((row) => endpointView(row)), total: Number(total.n) };
}

/**
 * What switching `active` changes besides the flag. Turning an endpoint off notes when and that
 * it was by hand; turning it on clears that and its failing run, so a re-enabled endpoint starts
 * afresh (the deliveries its disable ended stay DEAD until recovered or retried).
 */
function activation(current: EndpointRow, active: boolean | undefined) {
  if (active === undefined || active === current.active) return {};
  if (!active) return { active, disabled_at: sql<Date>`now()`, disabled_reason: 'MANUAL' as const };
  return { active, disabled_at: null, disabled_reason: null, failing_since: null, disable_warned_at: null };
}

/** `changes` have been checked like a create's input. */
export async function updateEndpoint(
  trx: Transaction<DB>,
  caller: ScopedCaller,
  id: string,
  changes: { url?: string; events?: string[]; active?: boolean; maxPerSecond?: number | null },
): Promise<EndpointView> {
  const current = await lockEndpoint(trx, caller, id, 'change');
  const { url, events, maxPerSecond } = changes;
  const row = await trx
    .updateTable('webhook_endpoints')
    .set({
      ...(url !== undefined ? { url } : {}),
      ...(events !== undefined ? { events } : {}),
      ...(maxPerSecond !== undefined ? { max_per_second: maxPerSecond } : {}),
      ...activation(current, changes.active),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  // No attempt follows while it is off: what waited ends DEAD (ENDPOINT_DISABLED), shown as such
  // in the log, and a recover or retry sends it once the endpoint is on again.
  if (changes.active === false && current.active) {
    await endWaitingDeliveries(trx, id, { cause: 'endpointDisabled', lastError: 'endpoint disabled by hand' });
  }
  return endpointView(row);
}

/** Soft delete; its waiting deliveries end DEAD, since there is nowhere left to send them. */
export async function deleteEndpoint(
  trx: Transaction<DB>,
  caller: ScopedCaller,
  id: string,
): Promise<{ deleted: true }> {
  await lockEndpoint(trx, caller, id, 'delete');
  await trx
    .updateTable('webhook_endpoints')
    .set({ deleted_at: sql<Date>`now()`, active: false, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .execute();
  await endWaitingDeliveries(trx, id, { cause: 'endpointDeleted', lastError: 'endpoint deleted' });
  return { deleted: true };
}

export async function rotateSecret(trx: Transaction<DB>, caller: ScopedCaller, id: string): Promise<EndpointView> {
  const current = await lockEndpoint(trx, caller, id, 'rotate the secret of');
  const row = await trx
    .updateTable('webhook_endpoints')
    .set({
      secret: newEndpointSecret(current.signature_scheme),
      previous_secret: current.secret,
      previous_secret_expires_at: new Date(Date.now() + ROTATION_OVERLAP_MS),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return endpointView(row, { withSecret: true });
}

/**
 * A `ping` event to this endpoint only (it bypasses subscriptions and the fan-out). A disabled
 * endpoint gets nothing, a ping no more than any other event: ENDPOINT_INACTIVE, and no event.
 */
export async function sendPing(trx: Transaction<DB>, caller: ScopedCaller, id: string): Promise<string> {
  const endpoint = await findEndpoint(trx, caller, id);
  if (!endpoint.active) {
    throw new ApiError(
      'ENDPOINT_INACTIVE',
      'This webhook endpoint is disabled: re-enable it (PATCH active: true) before sending it a test event.',
    );
  }
  const now = new Date();
  const event = eventRecord(
    'ping',
    caller,
    endpoint.id,
    { endpointId: endpoint.id, message: 'Webhook test from the Commerce Developer API.' },
    now,
  );
  await unitOfWork().events([event]).run(trx);
  const deliveryId = newId('dlv');
  await trx
    .insertInto('webhook_deliveries')
    .values({
      id: deliveryId,
      event_id: event.id,
      endpoint_id: endpoint.id,
      business_id: caller.businessId,
      environment: caller.environment,
      event: 'ping',
      status: NEW_STATUS,
      next_attempt_at: now,
      locked_by: null,
      locked_until: null,
      last_status_code: null,
      last_error: null,
      completed_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return deliveryId;
}
