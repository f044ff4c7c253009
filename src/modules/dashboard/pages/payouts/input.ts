import { createHmac } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { sameToken } from '../../../../http/auth.js';
import { E164_PATTERN } from '../../../../lib/phone.js';
import { MAX_BATCH_ITEMS } from '../../../payouts/schemas.js';
import type { PayoutInput } from '../../../payouts/service.js';
import { readAmount, type Lang } from '../../../../lib/i18n.js';

/**
 * What the payout forms and the batch CSV are read into, and why a value is refused. Problems are
 * codes, not sentences: the page words them in the session's language (payout-routes.ts).
 */

const E164 = new RegExp(E164_PATTERN);
/** A number as written in Mauritania: 8 digits, the country code left out. */
const LOCAL_NUMBER = /^[0-9]{8}$/;
const MAURITANIA = '+222';
/** Separators people type inside a number ("20 00 00 01", "20-00-00-01"). */
const SEPARATORS = /[\s.-]/g;
/** The API's limit on a payout's description (payouts/schemas.ts). */
export const MAX_DESCRIPTION = 200;

export type Problem = 'phone' | 'amount' | 'amountRange' | 'description';
export type PayoutField = 'amount' | 'phone' | 'description';

/** The destination as E.164: a local 8-digit number gets +222, anything else must already be E.164. */
export function readPhone(text: string): string | undefined {
  const compact = text.replace(SEPARATORS, '');
  if (LOCAL_NUMBER.test(compact)) return `${MAURITANIA}${compact}`;
  return E164.test(compact) ? compact : undefined;
}

/** An amount in MRU ("150.50", "1 250,5", lib/i18n.ts's grammar) as centimes, or why not. */
export function readPayoutAmount(
  text: string,
  maxAmount: number,
  lang: Lang,
): number | Extract<Problem, 'amount' | 'amountRange'> {
  const centimes = readAmount(text, lang);
  if (centimes === undefined) return 'amount';
  return centimes < 1 || centimes > maxAmount ? 'amountRange' : centimes;
}

/** Centimes as the form writes them back ("150.50"): what the review step posts on. */
export function mruText(centimes: number): string {
  return `${Math.floor(centimes / 100)}.${String(centimes % 100).padStart(2, '0')}`;
}

export type FormReading = { input: PayoutInput } | { problems: Partial<Record<PayoutField, Problem>> };

/** The new-payout form's fields as a payout, or every field's problem at once. */
export function readPayoutForm(
  form: { amount: string; phone: string; description?: string | undefined },
  maxAmount: number,
  lang: Lang,
): FormReading {
  const amount = readPayoutAmount(form.amount, maxAmount, lang);
  const phone = readPhone(form.phone);
  const description = (form.description ?? '').trim();
  if (typeof amount === 'number' && phone !== undefined && description.length <= MAX_DESCRIPTION) {
    return { input: payoutInput(amount, phone, description) };
  }
  const problems: Partial<Record<PayoutField, Problem>> = {};
  if (typeof amount === 'string') problems.amount = amount;
  if (phone === undefined) problems.phone = 'phone';
  if (description.length > MAX_DESCRIPTION) problems.description = 'description';
  return { problems };
}

function payoutInput(amount: number, phone: string, description: string): PayoutInput {
  return { amount, destination: { type: 'WALLET', phone }, ...(description ? { description } : {}) };
}

// The batch CSV.

export const BATCH_COLUMNS = ['phone', 'amount', 'description'] as const;
type Column = (typeof BATCH_COLUMNS)[number];
const REQUIRED_COLUMNS: readonly Column[] = ['phone', 'amount'];

export type LineProblem = Problem | 'columns' | 'tooMany';

/** A refused line: its number in the file (the header is line 1), why, and what it held. */
export interface LineError {
  line: number;
  problem: LineProblem;
  value: string;
}

/** Why a whole file is refused. */
export type FileProblem =
  { kind: 'unreadable'; line: number } | { kind: 'header' } | { kind: 'empty' } | { kind: 'notText' };

export type BatchReading =
  | { kind: 'file'; problem: FileProblem }
  | { kind: 'lines'; items: PayoutInput[]; errors: LineError[]; lineCount: number };

interface ParsedRecord {
  record: string[];
  info: { lines: number };
}

/** The header's columns by position, or undefined when it is not a header this batch reads. */
function headerColumns(cells: readonly string[]): Column[] | undefined {
  const names = cells.map((cell) => cell.trim().toLowerCase());
  const known = (name: string): name is Column => (BATCH_COLUMNS as readonly string[]).includes(name);
  if (!names.every(known)) return undefined;
  if (new Set(names).size !== names.length) return undefined;
  if (!REQUIRED_COLUMNS.every((column) => names.includes(column))) return undefined;
  return names;
}

/** One data line checked: the payout it makes, or each of its problems. */
function readLine(
  cells: readonly string[],
  columns: readonly Column[],
  line: number,
  maxAmount: number,
): PayoutInput | LineError[] {
  if (cells.length !== columns.length) return [{ line, problem: 'columns', value: String(cells.length) }];
  const cell = (column: Column) => (cells[columns.indexOf(column)] ?? '').trim();
  const errors: LineError[] = [];
  const phone = readPhone(cell('phone'));
  if (phone === undefined) errors.push({ line, problem: 'phone', value: cell('phone') });
  // A file speaks no page's language: its amounts are read as English writes them ("1,250.50"),
  // or grouped by spaces with a decimal comma ("1 250,50"), never "1,250" as 1.25.
  const amount = readPayoutAmount(cell('amount'), maxAmount, 'en');
  if (typeof amount === 'string') errors.push({ line, problem: amount, value: cell('amount') });
  const description = cell('description');
  if (description.length > MAX_DESCRIPTION) errors.push({ line, problem: 'description', value: '' });
  if (errors.length > 0 || phone === undefined || typeof amount === 'string') return errors;
  return payoutInput(amount, phone, description);
}

function parseRecords(text: string): ParsedRecord[] | FileProblem {
  try {
    // Arrays, not objects: a line with a wrong number of cells is that line's problem, not the
    // file's. The library's types leave out the shape `info: true` gives each record.
    return parse(text, {
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      info: true,
    }) as unknown as ParsedRecord[];
  } catch (error) {
    const line = (error as { lines?: unknown }).lines;
    return { kind: 'unreadable', line: typeof line === 'number' ? line : 1 };
  }
}

/**
 * Reads a batch file and checks every line, refusing none alone: the page lists every bad line
 * (numbered as in the file, where a record ends when a quoted cell spans lines) and a batch is
 * only offered for confirmation when there is none. Lines past MAX_BATCH_ITEMS are one problem.
 */
export function readBatchCsv(bytes: Buffer, maxAmount: number): BatchReading {
  if (bytes.includes(0)) return { kind: 'file', problem: { kind: 'notText' } };
  const records = parseRecords(bytes.toString('utf8'));
  if (!Array.isArray(records)) return { kind: 'file', problem: records };
  const [header, ...rows] = records;
  if (!header) return { kind: 'file', problem: { kind: 'empty' } };
  const columns = headerColumns(header.record);
  if (!columns) return { kind: 'file', problem: { kind: 'header' } };
  if (rows.length === 0) return { kind: 'file', problem: { kind: 'empty' } };
  const items: PayoutInput[] = [];
  const errors: LineError[] = [];
  rows.forEach((row, index) => {
    if (index >= MAX_BATCH_ITEMS) return;
    const read = readLine(row.record, columns, row.info.lines, maxAmount);
    if (Array.isArray(read)) errors.push(...read);
    else items.push(read);
  });
  if (rows.length > MAX_BATCH_ITEMS) {
    errors.push({ line: rows[MAX_BATCH_ITEMS]!.info.lines, problem: 'tooMany', value: String(rows.length) });
  }
  return { kind: 'lines', items, errors, lineCount: rows.length };
}

// Between the dry run and the confirmation, the checked batch travels in the page, signed.

/** Who a signed batch belongs to: a batch checked in one session and mode is confirmed there only. */
export interface BatchOwner {
  /** The session's token hash: known to the server only, never drawn in a page. */
  secret: string;
  businessId: string;
  environment: string;
}

type CompactItem = [phone: string, amount: number, description: string];
/** What a seal carries: when the file was checked, and its items. */
interface SealedContent {
  sealedAt: number;
  items: CompactItem[];
}

/**
 * How long a checked batch may wait for its confirmation. A seal confirms once (its key is the
 * seal, kept 24 hours by the idempotency store): it must expire well before that key does.
 */
export const SEAL_MAX_AGE_SECONDS = 60 * 60;

function signature(owner: BatchOwner, payload: string): string {
  return createHmac('sha256', owner.secret)
    .update(`payout-batch\n${owner.businessId}\n${owner.environment}\n`)
    .update(payload)
    .digest('base64url');
}

/** The checked items as the confirm form's hidden fields, sealed at `sealedAt` (seconds since the epoch). */
export function sealBatch(
  items: readonly PayoutInput[],
  owner: BatchOwner,
  sealedAt = Math.floor(Date.now() / 1000),
): { batch: string; signature: string } {
  const content: SealedContent = {
    sealedAt,
    items: items.map((item) => [item.destination.phone, item.amount, item.description ?? '']),
  };
  const batch = Buffer.from(JSON.stringify(content)).toString('base64url');
  return { batch, signature: signature(owner, batch) };
}

/** The key a sealed batch's confirmation is written under: the seal, whatever `_idem` it came with. */
export function sealKey(sealed: { signature: string }): string {
  return `batch-seal:${sealed.signature}`;
}

function isCompactItem(value: unknown): value is CompactItem {
  return (
    Array.isArray(value) &&
    value.length === 3 &&
    typeof value[0] === 'string' &&
    Number.isSafeInteger(value[1]) &&
    typeof value[2] === 'string'
  );
}

/**
 * The items of a sealed batch, or undefined when the seal does not match this session and mode or
 * is older than SEAL_MAX_AGE_SECONDS.
 * Each item is checked again as a CSV line is: the seal proves where the batch came from, the
 * checks that what is created is still what the rules allow (totals are always recomputed).
 */
export function openBatch(
  sealed: { batch: string; signature: string },
  owner: BatchOwner,
  maxAmount: number,
): PayoutInput[] | undefined {
  if (!sameToken(sealed.signature, signature(owner, sealed.batch))) return undefined;
  let decoded: Partial<SealedContent> | undefined;
  try {
    decoded = JSON.parse(Buffer.from(sealed.batch, 'base64url').toString('utf8')) as Partial<SealedContent>;
  } catch {
    return undefined;
  }
  const age = Date.now() / 1000 - Number(decoded?.sealedAt);
  if (!(age >= 0 && age <= SEAL_MAX_AGE_SECONDS)) return undefined;
  const sealedItems: unknown = decoded?.items;
  if (!Array.isArray(sealedItems) || sealedItems.length < 1 || sealedItems.length > MAX_BATCH_ITEMS) return undefined;
  const items: PayoutInput[] = [];
  for (const value of sealedItems) {
    if (!isCompactItem(value)) return undefined;
    const [phone, amount, description] = value;
    const read = readLine([phone, mruText(amount), description], BATCH_COLUMNS, 0, maxAmount);
    if (Array.isArray(read) || read.destination.phone !== phone || read.amount !== amount) return undefined;
    items.push(read);
  }
  return items;
}
