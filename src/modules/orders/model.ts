import { sql, type Selectable } from 'kysely';
import type { OrdersTable } from '../../db/schema.js';
import type { Caller } from '../../http/context.js';

export type { Caller };

export type OrderRow = Selectable<OrdersTable>;

/** An order as a write left it, with its shop's name for the answer, read by the same statement. */
export type ChangedOrder = OrderRow & { shop_name: string };
/** What a write adds to its `RETURNING` for a `ChangedOrder`. */
export const SHOP_NAME = sql<string>`(SELECT name FROM shops WHERE shops.id = orders.shop_id)`.as('shop_name');

/** Where an order is found: by the merchant (its key's business and environment) or by its customer link. */
export type OrderLocator = { caller: Caller; referenceNumber: string } | { customerRef: string };
