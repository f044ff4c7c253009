import type { Environment } from '../../src/db/schema.js';
import { expectStatus, type TestApp, type TestResponse } from '../support/harness.js';

export const SELLERS = '/api/v1/dev/sellers';

/** POST a seller with a fresh idempotency key (or the one given). */
export function postSeller(
  t: TestApp,
  key: string,
  body: Record<string, unknown>,
  idempotencyKey: string | true = true,
): Promise<TestResponse> {
  return t.request('POST', SELLERS, { key, body, idempotencyKey });
}

/** A seller that must be created (201): its view. */
export async function createSeller(t: TestApp, key: string, body: Record<string, unknown> = {}) {
  const response = await postSeller(t, key, { name: 'Stall 12', phone: '+22236000012', ...body });
  expectStatus(response, 201);
  return response.body.data;
}

export async function getSeller(t: TestApp, key: string, id: string) {
  const response = await t.request('GET', `${SELLERS}/${id}`, { key });
  expectStatus(response, 200);
  return response.body.data;
}

export function patchSeller(t: TestApp, key: string, id: string, body: Record<string, unknown>) {
  return t.request('PATCH', `${SELLERS}/${id}`, { key, body, idempotencyKey: true });
}

/** The events written about a seller, oldest first, as stored (name and parsed body). */
export async function sellerEvents(t: TestApp, id: string) {
  const rows = await t.runtime.db
    .selectFrom('events')
    .select(['event', 'body', 'environment'])
    .where('subject', '=', id)
    .orderBy('sequence')
    .execute();
  return rows.map((row) => ({ event: row.event, environment: row.environment, body: JSON.parse(row.body) }));
}

/** The seller's ledger account, as stored. */
export function sellerAccount(t: TestApp, id: string, environment: Environment = 'test') {
  return t.runtime.db
    .selectFrom('ledger_accounts')
    .selectAll()
    .where('kind', '=', 'seller')
    .where('owner_id', '=', id)
    .where('environment', '=', environment)
    .executeTakeFirst();
}

export async function sellerCount(t: TestApp, businessId: string): Promise<number> {
  const row = await t.runtime.db
    .selectFrom('sellers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('business_id', '=', businessId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
