import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { type EventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { fold, normaliseExternalId, searchQuery, type ProductRow } from './model.js';
import { shopOf, type CatalogCaller } from './reads.js';
import { lowestPrice } from './writes.js';
import { stockEvents } from './stock.js';
import { neutraliseCell, restoreCell } from '../../lib/csv.js';
import { isSellerId, sellerRefusals } from './csv-sellers.js';

/** decisions.md: the CSV columns, in this order on export. */
export const CSV_COLUMNS = [
  'externalId',
  'name',
  'price',
  'description',
  'quantity',
  'status',
  'categoryId',
  'costBasis',
  'seller',
  'id',
] as const;
type Column = (typeof CSV_COLUMNS)[number];
const REQUIRED: Column[] = ['name', 'price'];
export const MAX_IMPORT_ROWS = 10_000;
const CHUNK = 500;

export interface ImportError {
  row: number;
  code: string;
  message: string;
}

export interface ImportResult {
  dryRun: boolean;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  errors: ImportError[];
}

interface CsvProduct {
  /** The product the row updates, from the export's `id` column; null: upsert by externalId. */
  id: string | null;
  externalId: string | null;
  name: string;
  price: number;
  description: string | null;
  quantity: number | null;
  status: 'ACTIVE' | 'DISABLED' | null;
  categoryId: string | null;
  costBasis: number | null;
  /** The seller (SL-...) the product is given; null: none (blank) or the column is absent. */
  seller: string | null;
  present: Set<Column>;
}

function rowError(row: number, message: string): ImportError {
  return { row, code: 'VALIDATION_ERROR', message };
}

const INTEGER = /^[0-9]+$/;

/** One data row to a product, or the reason it cannot be one. `row` counts the header as row 1. */
function readRow(record: Record<string, string>, row: number, columns: Set<Column>): CsvProduct | ImportError {
  const cell = (column: Column) => (columns.has(column) ? restoreCell((record[column] ?? '').trim()) : '');
  const id = cell('id');
  if (id.length > 256) return rowError(row, 'id is longer than 256 characters');
  const externalId = normaliseExternalId(cell('externalId'));
  if (externalId === '' && id === '') return rowError(row, 'externalId (or the id of an existing product) is required');
  if (externalId.length > 256) return rowError(row, 'externalId must be 1 to 256 characters');
  const name = cell('name');
  if (name.length < 1 || name.length > 200) return rowError(row, 'name must be 1 to 200 characters');
  const integer = (column: Column, required: boolean): number | null | ImportError => {
    const text = cell(column);
    if (text === '') return required ? rowError(row, `${column} is required`) : null;
    if (!INTEGER.test(text) || Number(text) > 1_000_000_000_000) {
      return rowError(
        row,
        `${column} must be a whole number of ${column === 'quantity' ? 'units' : 'centimes'}, not "${text}"`,
      );
    }
    return Number(text);
  };
  const price = integer('price', true);
  if (typeof price === 'object' && price !== null) return price;
  const quantity = integer('quantity', false);
  if (typeof quantity === 'object' && quantity !== null) return quantity;
  if (quantity !== null && quantity > 1_000_000_000) return rowError(row, 'quantity is too large');
  const costBasis = integer('costBasis', false);
  if (typeof costBasis === 'object' && costBasis !== null) return costBasis;
  const status = cell('status').toUpperCase();
  if (status !== '' && status !== 'ACTIVE' && status !== 'DISABLED')
    return rowError(row, 'status must be ACTIVE or DISABLED');
  const description = cell('description');
  if (description.length > 5000) return rowError(row, 'description is longer than 5000 characters');
  const categoryId = cell('categoryId');
  if (categoryId.length > 100) return rowError(row, 'categoryId is longer than 100 characters');
  const seller = cell('seller').toUpperCase();
  if (seller !== '' && !isSellerId(seller)) return rowError(row, 'seller must be SL- and 16 digits, or blank');
  return {
    id: id === '' ? null : id,
    externalId: externalId === '' ? null : externalId,
    name,
    price: price as number,
    description: description === '' ? null : description,
    quantity,
    status: status === '' ? null : (status as 'ACTIVE' | 'DISABLED'),
    categoryId: categoryId === '' ? null : categoryId,
    costBasis,
    seller: seller === '' ? null : seller,
    present: columns,
  };
}

function parseCsv(text: string): { records: Record<string, string>[]; columns: Set<Column> } {
  let columns = new Set<Column>();
  let records: Record<string, string>[];
  try {
    records = parse(text, {
      bom: true,
      skip_empty_lines: true,
      columns: (header: string[]) => {
        const names = header.map((name) => name.trim());
        const unknown = names.filter((name) => !(CSV_COLUMNS as readonly string[]).includes(name));
        if (unknown.length > 0)
          throw new ApiError(
            'CSV_INVALID',
            `Unknown column(s): ${unknown.join(', ')}. Columns: ${CSV_COLUMNS.join(',')}.`,
          );
        const missing: string[] = REQUIRED.filter((name) => !names.includes(name));
        if (!names.includes('externalId') && !names.includes('id')) missing.unshift('externalId (or id)');
        if (missing.length > 0) throw new ApiError('CSV_INVALID', `Missing column(s): ${missing.join(', ')}.`);
        if (new Set(names).size !== names.length) throw new ApiError('CSV_INVALID', 'A column appears twice.');
        columns = new Set(names as Column[]);
        return names;
      },
    }) as Record<string, string>[];
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError('CSV_INVALID', `The CSV file cannot be parsed: ${(error as Error).message}`);
  }
  if (columns.size === 0) throw new ApiError('CSV_INVALID', 'The CSV file is empty: it needs a header row.');
  if (records.length > MAX_IMPORT_ROWS) {
    throw new ApiError('CSV_INVALID', `At most ${MAX_IMPORT_ROWS} rows per import; this file has ${records.length}.`);
  }
  return { records, columns };
}

/** What an imported row changes on an existing product: only the columns the file has. */
function changesFor(product: ProductRow, row: CsvProduct) {
  const next = {
    name: row.name,
    price: row.price,
    description: row.present.has('description') ? row.description : product.description,
    quantity: row.present.has('quantity') ? row.quantity : product.quantity,
    status: row.status ?? product.status,
    category_id: row.present.has('categoryId') ? row.categoryId : product.category_id,
    cost_basis: row.present.has('costBasis') ? row.costBasis : product.cost_basis,
    seller_id: row.present.has('seller') ? row.seller : product.seller_id,
  };
  const same =
    next.name === product.name &&
    next.price === product.price &&
    next.description === product.description &&
    next.quantity === product.quantity &&
    next.status === product.status &&
    next.category_id === product.category_id &&
    next.cost_basis === product.cost_basis &&
    next.seller_id === product.seller_id;
  return same ? null : next;
}

/**
 * CSV import (decisions "Products"): upsert by externalId. Rows with problems are reported and
 * skipped; every other row is written in one transaction. `dryRun` reports without writing.
 */
export async function importProducts(
  trx: Transaction<DB>,
  caller: CatalogCaller,
  text: string,
  dryRun: boolean,
): Promise<ImportResult> {
  const { records, columns } = parseCsv(text);
  const errors: ImportError[] = [];
  const rows: { row: number; product: CsvProduct }[] = [];
  // A row names its product by `id` when it has one (an exported product without an externalId
  // comes back that way), else by `externalId`; each product once per file.
  const seenExternal = new Map<string, number>();
  const seenId = new Map<string, number>();
  records.forEach((record, index) => {
    const row = index + 2;
    const read = readRow(record, row, columns);
    if ('code' in read) return errors.push(read);
    const [seen, key, label] =
      read.id !== null ? [seenId, read.id, 'id'] : [seenExternal, read.externalId as string, 'externalId'];
    const earlier = seen.get(key);
    if (earlier !== undefined) return errors.push(rowError(row, `${label} ${key} is already on row ${earlier}`));
    seen.set(key, row);
    rows.push({ row, product: read });
  });

  const shop = await shopOf(trx, caller);
  // Found first, then locked in one statement in id order, like an order's or a bulk update's
  // products: an import and an order naming the same products queue rather than deadlock.
  const found: string[] = [];
  const byId = [...seenId.keys()];
  const byExternalId = [...seenExternal.keys()];
  for (const [column, keys] of [
    ['id', byId],
    ['external_id', byExternalId],
  ] as const) {
    for (let start = 0; start < keys.length; start += CHUNK) {
      const chunk = await trx
        .selectFrom('products')
        .select('id')
        .where('shop_id', '=', shop.id)
        .where('deleted_at', 'is', null)
        .where(column, 'in', keys.slice(start, start + CHUNK))
        .execute();
      found.push(...chunk.map((product) => product.id));
    }
  }
  const existingById = new Map<string, ProductRow>();
  const existingByExternalId = new Map<string, ProductRow>();
  if (found.length > 0) {
    const locked = await trx
      .selectFrom('products')
      .selectAll()
      .where('id', '=', sql<string>`any(${[...new Set(found)]}::text[])`)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .forUpdate()
      .execute();
    for (const product of locked) {
      existingById.set(product.id, product);
      if (product.external_id !== null) existingByExternalId.set(product.external_id, product);
    }
  }
  const refusedSellers = await sellerRefusals(
    trx,
    caller,
    rows.flatMap(({ product }) => (product.seller === null ? [] : [product.seller])),
  );
  const now = new Date();
  const inserts = [];
  const updates = [];
  const events: EventRecord[] = [];
  const updated = new Set<string>();
  let unchanged = 0;
  for (const { row: rowNumber, product: row } of rows) {
    const current = row.id !== null ? existingById.get(row.id) : existingByExternalId.get(row.externalId as string);
    if (row.id !== null && !current) {
      errors.push({ row: rowNumber, code: 'PRODUCT_NOT_FOUND', message: `No product of this shop has id ${row.id}` });
      continue;
    }
    if (current && row.id !== null && row.externalId !== null && row.externalId !== current.external_id) {
      errors.push(
        rowError(rowNumber, `externalId ${row.externalId} is not product ${row.id}'s; change it through the API`),
      );
      continue;
    }
    // A row by id and another by externalId may name one product: the later one fails.
    if (current && updated.has(current.id)) {
      errors.push(rowError(rowNumber, `product ${current.id} is already on an earlier row`));
      continue;
    }
    // Only a seller newly given is checked, as the API does: a product keeps its seller, even disabled since.
    const refusedSeller =
      row.seller !== null && row.seller !== current?.seller_id ? refusedSellers.get(row.seller) : undefined;
    if (refusedSeller) {
      errors.push({ row: rowNumber, code: refusedSeller.code, message: refusedSeller.message });
      continue;
    }
    if (current) updated.add(current.id);
    if (!current) {
      const externalId = row.externalId as string;
      inserts.push({
        id: newId('prod'),
        shop_id: shop.id,
        business_id: caller.businessId,
        environment: caller.environment,
        external_id: externalId,
        name: row.name,
        search_name: fold(row.name),
        price: row.price,
        description: row.description,
        quantity: row.quantity,
        status: row.status ?? 'DISABLED',
        category_id: row.categoryId,
        cost_basis: row.costBasis,
        seller_id: row.seller,
        created_at: now,
        updated_at: now,
      });
      continue;
    }
    const next = changesFor(current, row);
    if (next && lowestPrice({ price: next.price, variants: current.variants, options: current.options }) < 0) {
      errors.push(rowError(rowNumber, `price ${next.price} is below what the variant and option adjustments take off`));
      continue;
    }
    if (!next) {
      unchanged += 1;
      continue;
    }
    updates.push({ id: current.id, ...next, search_name: fold(next.name) });
    events.push(...stockEvents({ ...current, name: next.name }, current.quantity, next.quantity, undefined, now));
  }
  const result: ImportResult = {
    dryRun,
    created: inserts.length,
    updated: updates.length,
    unchanged,
    failed: errors.length,
    errors,
  };
  if (dryRun) return result;
  for (let start = 0; start < inserts.length; start += CHUNK) {
    await trx
      .insertInto('products')
      .values(inserts.slice(start, start + CHUNK))
      .execute();
  }
  for (let start = 0; start < updates.length; start += CHUNK) {
    const chunk = JSON.stringify(updates.slice(start, start + CHUNK));
    await sql`
      UPDATE products AS p
      SET name = v.name, search_name = v.search_name, price = v.price, description = v.description,
          quantity = v.quantity, status = v.status, category_id = v.category_id, cost_basis = v.cost_basis,
          seller_id = v.seller_id, updated_at = ${now}
      FROM jsonb_to_recordset(${chunk}::jsonb) AS v(id text, name text, search_name text, price bigint,
        description text, quantity integer, status text, category_id text, cost_basis bigint, seller_id text)
      WHERE p.id = v.id`.execute(trx);
  }
  await unitOfWork().events(events).run(trx);
  return result;
}

/** The list's filters (GET /store/products), which the export takes. */
export interface ProductExportFilters {
  search?: string | undefined;
  status?: 'ACTIVE' | 'DISABLED' | 'ALL' | undefined;
  categoryId?: string | undefined;
}

/**
 * Products per batch of the export: what a download holds while its client is slow or stalled
 * (http/downloads.ts). Fewer than the balance's 200: a product's description alone may take 5,000
 * characters, so a batch stays under about 300 kB whatever the catalog.
 */
const EXPORT_BATCH = 50;

type Cursor = { at: string; id: string };

/** One batch of the export as CSV text (with the header first); its rows are garbage once this returns. */
async function renderedBatch(
  db: Kysely<DB>,
  shopId: string,
  filters: ProductExportFilters,
  after: Cursor | undefined,
): Promise<{ text: string; count: number; last: Cursor | undefined }> {
  let query = db
    .selectFrom('products')
    .select([
      'id',
      'external_id',
      'name',
      'price',
      'description',
      'quantity',
      'status',
      'category_id',
      'cost_basis',
      'seller_id',
    ])
    .select(sql<string>`created_at::text`.as('cursor_at'))
    .where('shop_id', '=', shopId)
    .where('deleted_at', 'is', null);
  if (filters.status && filters.status !== 'ALL') query = query.where('status', '=', filters.status);
  if (filters.categoryId) query = query.where('category_id', '=', filters.categoryId);
  const words = filters.search ? searchQuery(filters.search) : null;
  if (words) query = query.where(sql<boolean>`search_vector @@ to_tsquery('simple', ${words})`);
  if (after) query = query.where(sql<boolean>`(created_at, id) > (${after.at}::timestamptz, ${after.id})`);
  const rows = await query.orderBy('created_at').orderBy('id').limit(EXPORT_BATCH).execute();
  const text = stringify(
    rows.map((row) => [
      neutraliseCell(row.external_id ?? ''),
      neutraliseCell(row.name),
      row.price,
      neutraliseCell(row.description ?? ''),
      row.quantity ?? '',
      row.status,
      neutraliseCell(row.category_id ?? ''),
      row.cost_basis ?? '',
      row.seller_id ?? '',
      row.id,
    ]),
    { header: after === undefined, columns: [...CSV_COLUMNS] },
  );
  const last = rows.at(-1);
  return { text, count: rows.length, last: last && { at: last.cursor_at, id: last.id } };
}

/** The export a batch at a time; while it waits for its client it holds a batch's text, not its rows. */
async function* exportBatches(db: Kysely<DB>, shopId: string, filters: ProductExportFilters): AsyncGenerator<string> {
  let after: Cursor | undefined;
  for (;;) {
    const batch = await renderedBatch(db, shopId, filters, after);
    // The first batch carries the header, even when no product matches.
    if (after === undefined || batch.count > 0) yield batch.text;
    if (batch.count < EXPORT_BATCH) return;
    after = batch.last;
  }
}

/**
 * The shop's products the list's filters take (every one without filters) as CSV, oldest first,
 * with its `id` last; importing it again changes nothing (a product without an externalId is
 * matched by that id). In batches, read as the client takes them; the shop is found first, so a
 * missing one answers SHOP_NOT_FOUND before the first byte.
 */
export async function exportProducts(
  db: Kysely<DB>,
  caller: CatalogCaller,
  filters: ProductExportFilters = {},
): Promise<AsyncGenerator<string>> {
  const shop = await shopOf(db, caller);
  return exportBatches(db, shop.id, filters);
}
