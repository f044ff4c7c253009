import { sql } from 'kysely';
import type { Environment, KeyKind } from '../../db/schema.js';
import { inTransaction, type Executor } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { issueKey, type IssuedKey } from './keys.js';

export interface BusinessView {
  id: string;
  name: string;
  /** The name payers see in live mode, as the operator verified it (null until approved live). */
  verifiedName: string | null;
  liveApproved: boolean;
  apiEnabled: boolean;
}

/** A business's name, or the one the operator verifies: 1 to 200 characters once trimmed. */
function checkedName(field: string, name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 200) {
    throw new ApiError('VALIDATION_ERROR', `${field} must have 1 to 200 characters.`, [
      { field, message: 'must have 1 to 200 characters' },
    ]);
  }
  return trimmed;
}

const VIEW_COLUMNS = ['id', 'name', 'verified_name', 'live_approved', 'api_enabled'] as const;

function businessView(row: {
  id: string;
  name: string;
  verified_name: string | null;
  live_approved: boolean;
  api_enabled: boolean;
}): BusinessView {
  return {
    id: row.id,
    name: row.name,
    verifiedName: row.verified_name,
    liveApproved: row.live_approved,
    apiEnabled: row.api_enabled,
  };
}

export interface CreatedBusiness {
  business: BusinessView;
  shop: { id: string } | null;
  /** Shops of both environments; `shop` above is the sandbox one. */
  shops: { id: string; environment: Environment }[];
  keys: IssuedKey[];
}

export interface ListedBusiness extends BusinessView {
  /** When it asked for live access from its dashboard; null when it never did. */
  liveRequestedAt: string | null;
  createdAt: string;
}

const keyKinds: KeyKind[] = ['secret', 'publishable'];

/** The name of the business a first start seeds (SEED_DEMO). */
export const DEMO_BUSINESS_NAME = 'Demo Shop';
/**
 * The id of that business, which only the seed gives (every other id is `newId`'s, 24 characters
 * after `biz_`): the root page finds the demo by it, never by its name, which any merchant may take.
 */
export const DEMO_BUSINESS_ID = 'biz_demo';

/**
 * A business with its shops (one per environment), a sandbox key of each kind and, with
 * `liveKeys`, a live key of each kind. Live keys go with live approval (decision 053), through the
 * operator API as through the CLI: `liveKeys` defaults to `approveLive`, and approveLive() issues
 * the ones a business lacks when it is approved later. `liveKeys: true` on an unapproved business
 * is for tests that provoke LIVE_ACCESS_NOT_APPROVED.
 */
export async function createBusiness(
  db: Executor,
  input: {
    name: string;
    approveLive?: boolean;
    /** With `approveLive`: the name payers see, verified by the operator (default `name`). */
    verifiedName?: string;
    withShop?: boolean;
    liveKeys?: boolean;
    id?: string;
  },
): Promise<CreatedBusiness> {
  const approved = input.approveLive ?? false;
  const verifiedName = approved ? checkedName('verifiedName', input.verifiedName ?? input.name) : null;
  return inTransaction(db, async (trx) => {
    const business = await trx
      .insertInto('businesses')
      .values({
        id: input.id ?? newId('biz'),
        name: input.name,
        live_approved: approved,
        verified_name: verifiedName,
      })
      .returning(VIEW_COLUMNS)
      .executeTakeFirstOrThrow();
    await trx.insertInto('fee_plans').values({ business_id: business.id }).execute();
    const shops: { id: string; environment: Environment }[] = [];
    if (input.withShop !== false) {
      for (const environment of ['test', 'live'] as const) {
        const shop = await trx
          .insertInto('shops')
          .values({ id: newId('shop'), business_id: business.id, environment, name: input.name })
          .returning(['id', 'environment'])
          .executeTakeFirstOrThrow();
        shops.push(shop);
      }
    }
    const environments: Environment[] = (input.liveKeys ?? approved) ? ['test', 'live'] : ['test'];
    const keys: IssuedKey[] = [];
    for (const environment of environments) {
      for (const kind of keyKinds) keys.push(await issueKey(trx, { businessId: business.id, kind, environment }));
    }
    const sandboxShop = shops.find((shop) => shop.environment === 'test');
    return {
      business: businessView(business),
      shop: sandboxShop ? { id: sandboxShop.id } : null,
      shops,
      keys,
    };
  });
}

export async function updateBusiness(
  db: Executor,
  businessId: string,
  changes: { api_enabled?: boolean },
): Promise<BusinessView> {
  const row = await db
    .updateTable('businesses')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', businessId)
    .returning(VIEW_COLUMNS)
    .executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND', `No business ${businessId}.`);
  return businessView(row);
}

/**
 * Approves the business for live mode and issues a live key of each kind it was never given (a
 * business created without live keys gets them now, shown once). A kind it already had, even
 * revoked or suspended, is left to the operator: approving again never hands out keys again.
 * The name payers see is verified with it: `verifiedName` as given, else the one verified before,
 * else the business's name now. Approving again with a `verifiedName` is how the operator, and
 * only the operator, changes it.
 */
export async function approveLive(
  db: Executor,
  businessId: string,
  input: { verifiedName?: string | undefined } = {},
): Promise<BusinessView & { keys: IssuedKey[] }> {
  const given = input.verifiedName === undefined ? null : checkedName('verifiedName', input.verifiedName);
  return inTransaction(db, async (trx) => {
    // The update locks the business row: a concurrent approval waits, then sees these keys.
    const row = await trx
      .updateTable('businesses')
      .set({
        live_approved: true,
        verified_name: sql<string>`coalesce(${given}::text, verified_name, name)`,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', businessId)
      .returning(VIEW_COLUMNS)
      .executeTakeFirst();
    if (!row) throw new ApiError('NOT_FOUND', `No business ${businessId}.`);
    const business = businessView(row);
    const had = await trx
      .selectFrom('api_keys')
      .select('kind')
      .distinct()
      .where('business_id', '=', businessId)
      .where('environment', '=', 'live')
      .execute();
    const keys: IssuedKey[] = [];
    for (const kind of keyKinds) {
      if (had.some((key) => key.kind === kind)) continue;
      keys.push(await issueKey(trx, { businessId, kind, environment: 'live' }));
    }
    return { ...business, keys };
  });
}

/** Every business, newest first, a page at a time (`admin business list`). */
export async function listBusinesses(
  db: Executor,
  window: { limit: number; offset: number },
): Promise<{ items: ListedBusiness[]; total: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('businesses')
      .select(LISTED_COLUMNS)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(window.limit)
      .offset(window.offset)
      .execute(),
    db
      .selectFrom('businesses')
      .select((eb) => eb.fn.countAll<string>().as('total'))
      .executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(listedView), total: Number(count.total) };
}

const LISTED_COLUMNS = [...VIEW_COLUMNS, 'live_requested_at', 'created_at'] as const;

function listedView(
  row: Parameters<typeof businessView>[0] & { live_requested_at: Date | null; created_at: Date },
): ListedBusiness {
  return {
    ...businessView(row),
    liveRequestedAt: row.live_requested_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}

/** One business as `admin business show` prints it. */
export async function getBusiness(db: Executor, businessId: string): Promise<ListedBusiness> {
  const row = await db.selectFrom('businesses').select(LISTED_COLUMNS).where('id', '=', businessId).executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND', `No business ${businessId}.`);
  return listedView(row);
}

/**
 * A business asks for live access (its dashboard's "Request live access"): the first ask's time
 * is kept, asking again changes nothing, and an approved business has nothing left to ask.
 */
export async function requestLiveAccess(db: Executor, businessId: string): Promise<ListedBusiness> {
  await db
    .updateTable('businesses')
    .set({ live_requested_at: sql<Date>`coalesce(live_requested_at, now())`, updated_at: sql<Date>`now()` })
    .where('id', '=', businessId)
    .where('live_approved', '=', false)
    .execute();
  return getBusiness(db, businessId);
}

/** How the shop's customers reach it: what its order pages show (empty fields are null). */
export interface BusinessContact {
  phone: string | null;
  email: string | null;
  pickupAddress: string | null;
  delivers: boolean;
}

export async function getBusinessContact(db: Executor, businessId: string): Promise<BusinessContact> {
  const row = await db
    .selectFrom('businesses')
    .select(['contact_phone', 'contact_email', 'pickup_address', 'delivers'])
    .where('id', '=', businessId)
    .executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND', `No business ${businessId}.`);
  return {
    phone: row.contact_phone,
    email: row.contact_email,
    pickupAddress: row.pickup_address,
    delivers: row.delivers,
  };
}

export async function setBusinessContact(db: Executor, businessId: string, contact: BusinessContact): Promise<void> {
  await db
    .updateTable('businesses')
    .set({
      contact_phone: contact.phone,
      contact_email: contact.email,
      pickup_address: contact.pickupAddress,
      delivers: contact.delivers,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', businessId)
    .execute();
}

export async function setGlobalApiEnabled(db: Executor, enabled: boolean): Promise<void> {
  await db
    .updateTable('platform_settings')
    .set({ value: JSON.stringify(enabled), updated_at: sql<Date>`now()` })
    .where('name', '=', 'developer_api_enabled')
    .execute();
}

/** The business's name, as its dashboard, checkout pages and receipts show it. */
export async function renameBusiness(db: Executor, businessId: string, name: string): Promise<void> {
  // The merchant's own name; the one payers see in live mode (verified_name) is the operator's.
  const trimmed = checkedName('name', name);
  const row = await db
    .updateTable('businesses')
    .set({ name: trimmed, updated_at: sql<Date>`now()` })
    .where('id', '=', businessId)
    .returning('id')
    .executeTakeFirst();
  if (!row) throw new ApiError('NOT_FOUND', `No business ${businessId}.`);
  // Its shops follow it, unless the business named them itself (setShopName).
  await db
    .updateTable('shops')
    .set({ name: trimmed })
    .where('business_id', '=', businessId)
    .where('own_name', '=', false)
    .execute();
}

/**
 * The business's shop in one mode: its id (the storefront's address), its name, and `ownName`, that
 * name when the business gave it one of its own (the sandbox shop and the live one share it), null
 * when it takes the business's; null when the business has no shops.
 */
export async function getShop(
  db: Executor,
  businessId: string,
  environment: Environment,
): Promise<{ id: string; name: string; ownName: string | null } | null> {
  const row = await db
    .selectFrom('shops')
    .select(['id', 'name', 'own_name'])
    .where('business_id', '=', businessId)
    .where('environment', '=', environment)
    .executeTakeFirst();
  return row ? { id: row.id, name: row.name, ownName: row.own_name ? row.name : null } : null;
}

/**
 * Gives the business's shops a name of their own, or (null) gives them back the business's name:
 * what the storefront and the customer's order pages show.
 */
export async function setShopName(db: Executor, businessId: string, name: string | null): Promise<void> {
  const own = name === null ? null : checkedName('shopName', name);
  await db
    .updateTable('shops')
    .set({
      name: own ?? sql<string>`(SELECT name FROM businesses WHERE businesses.id = shops.business_id)`,
      own_name: own !== null,
    })
    .where('business_id', '=', businessId)
    .execute();
}
