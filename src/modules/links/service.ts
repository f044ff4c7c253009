import type { Kysely } from 'kysely';
import type { Database } from '../../db/connect.js';
import type { DB, PaymentLinkStatus } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { Caller } from '../../http/context.js';
import { inOtherEnvironment } from '../../http/environments.js';
import { ApiError, invalid } from '../../http/errors.js';
import { checkMetadata } from '../../http/metadata.js';
import { randomBase62, randomDigits } from '../../lib/ids.js';
import { listLinkIntents } from '../intents/repo.js';
import { checkRedirectUrl } from '../intents/service.js';
import type { Static } from 'typebox';
import { INACTIVE_MESSAGE_MAX, LABEL_MAX, type CreateLinkBody, type UpdateLinkBody } from './schemas.js';
import {
  findLink,
  insertLink,
  listLinks as listLinkRows,
  updateLink as updateLinkRow,
  type LinkChange,
  type LinkRow,
} from './store.js';

export type CreateLinkInput = Static<typeof CreateLinkBody>;
export type UpdateLinkInput = Static<typeof UpdateLinkBody>;

/** The slug's length: 62^12 paths, so that a link is found only by whom it was shared with. */
const SLUG_LENGTH = 12;
const MAX_CREATE_ATTEMPTS = 8;

/**
 * What the service says of a field it refuses (after the field's name). The dashboard, which says
 * each in its own words, compares a refusal's message to these rather than reading the English.
 */
export const LINK_FIELD_MESSAGES = {
  required: 'is required',
  requiredForFixed: 'is required for a FIXED link',
  onlyForOpen: 'is only for OPEN links',
  onlyForFixed: 'is only for FIXED links (an OPEN link takes minAmount and maxAmount)',
  minAboveMax: 'is more than body.maxAmount',
  notDateTime: 'must be an ISO 8601 date-time',
  notFuture: 'must be in the future',
  amountRange: (maxAmount: number) => `must be between 1 and ${maxAmount} centimes`,
  tooLong: (max: number) => `must have at most ${max} characters`,
  belowPayments: (made: number) => `cannot be below the payments already made (${made})`,
} as const;
const M = LINK_FIELD_MESSAGES;

/** An amount a link names, within what one payment may be (decisions.md), refused by its field. */
function checkLinkAmount(field: string, amount: number | undefined, maxAmount: number): number | null {
  if (amount === undefined) return null;
  if (amount < 1 || amount > maxAmount) throw invalid(field, M.amountRange(maxAmount));
  return amount;
}

function futureDate(field: string, value: string, now: Date): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw invalid(field, M.notDateTime);
  if (date <= now) throw invalid(field, M.notFuture);
  return date;
}

/**
 * A text within `max` characters, counted in code points as the schema counts them: the API's
 * schema refuses longer first, and the dashboard's forms, which post looser, meet this.
 */
function checkLength(field: string, text: string, max: number): string {
  if ([...text].length > max) throw invalid(field, M.tooLong(max));
  return text;
}

/** The label trimmed (the payer page's heading): a blank one is a missing one. The dashboard's form reads it so too. */
export function checkLabel(label: string): string {
  const trimmed = label.trim();
  if (trimmed === '') throw invalid('body.label', M.required);
  return checkLength('body.label', trimmed, LABEL_MAX);
}

/** A new link of the caller's: checked field by field, then inserted (a clash of random values draws again). */
export async function createLink(
  trx: Executor,
  caller: Caller,
  input: CreateLinkInput,
  options: { maxAmount: number },
): Promise<LinkRow> {
  const now = new Date();
  const label = checkLabel(input.label);
  const fixed = input.amountType === 'FIXED';
  if (fixed) {
    if (input.amount === undefined) throw invalid('body.amount', M.requiredForFixed);
    if (input.minAmount !== undefined) throw invalid('body.minAmount', M.onlyForOpen);
    if (input.maxAmount !== undefined) throw invalid('body.maxAmount', M.onlyForOpen);
  } else if (input.amount !== undefined) {
    throw invalid('body.amount', M.onlyForFixed);
  }
  const amount = checkLinkAmount('body.amount', input.amount, options.maxAmount);
  const minAmount = checkLinkAmount('body.minAmount', input.minAmount, options.maxAmount);
  const maxAmount = checkLinkAmount('body.maxAmount', input.maxAmount, options.maxAmount);
  if (minAmount !== null && maxAmount !== null && minAmount > maxAmount) {
    throw invalid('body.minAmount', M.minAboveMax);
  }
  const metadata = input.metadata ?? {};
  checkMetadata(metadata);
  const fields = {
    businessId: caller.businessId,
    environment: caller.environment,
    label,
    amountType: input.amountType,
    amount,
    minAmount,
    maxAmount,
    maxPayments: input.maxPayments ?? null,
    expiresAt: input.expiresAt === undefined ? null : futureDate('body.expiresAt', input.expiresAt, now),
    collectName: input.collect?.name ?? false,
    collectNote: input.collect?.note ?? false,
    successUrl: checkRedirectUrl('body.successUrl', input.successUrl),
    metadata,
    createdAt: now,
  };
  for (let attempt = 0; attempt < MAX_CREATE_ATTEMPTS; attempt++) {
    const link = await insertLink(trx, {
      ...fields,
      referenceNumber: `PL-${randomDigits(16)}`,
      slug: randomBase62(SLUG_LENGTH),
    });
    if (link) return link;
  }
  throw new Error('no free payment link reference after retries');
}

/** api.md 5 rule 4: another business's link does not exist; the other environment's is a mismatch. */
async function visibleLink(db: Executor | Kysely<DB>, caller: Caller, referenceNumber: string, lock = false) {
  const link = await findLink(db, referenceNumber, { lock });
  if (link && link.business_id === caller.businessId && link.environment === caller.environment) return link;
  if (link?.business_id === caller.businessId) throw new ApiError('SANDBOX_MISMATCH');
  if (
    !link &&
    (await inOtherEnvironment(db, 'payment_links', { column: 'reference_number', value: referenceNumber }, caller))
  ) {
    throw new ApiError('SANDBOX_MISMATCH');
  }
  throw new ApiError('PAYMENT_LINK_NOT_FOUND', `No payment link ${referenceNumber}.`);
}

export function getLink(db: Kysely<DB>, caller: Caller, referenceNumber: string): Promise<LinkRow> {
  return visibleLink(db, caller, referenceNumber);
}

export function listLinks(
  db: Kysely<DB>,
  caller: Caller,
  query: { status: PaymentLinkStatus | undefined; limit: number; offset: number },
) {
  return listLinkRows(db, caller, { ...query, now: new Date() });
}

/**
 * A merchant's change to a link, under its row lock (a payment counting itself waits, then sees
 * the change: a link deactivated while a payer is on its page takes no payment). The limit may
 * not go below the payments already made.
 */
export async function updateLink(
  trx: Executor,
  caller: Caller,
  referenceNumber: string,
  input: UpdateLinkInput,
): Promise<LinkRow> {
  const now = new Date();
  const link = await visibleLink(trx, caller, referenceNumber, true);
  const change: LinkChange = {};
  if (input.label !== undefined) change.label = checkLabel(input.label);
  if (input.active !== undefined) change.active = input.active;
  if (input.inactiveMessage !== undefined) {
    change.inactive_message =
      input.inactiveMessage === null
        ? null
        : checkLength('body.inactiveMessage', input.inactiveMessage, INACTIVE_MESSAGE_MAX);
  }
  if (input.maxPayments !== undefined) {
    if (input.maxPayments !== null && input.maxPayments < link.payments_count) {
      throw invalid('body.maxPayments', M.belowPayments(link.payments_count));
    }
    change.max_payments = input.maxPayments;
  }
  if (input.expiresAt !== undefined) {
    change.expires_at = input.expiresAt === null ? null : futureDate('body.expiresAt', input.expiresAt, now);
  }
  if (input.metadata !== undefined) {
    checkMetadata(input.metadata);
    change.metadata = JSON.stringify(input.metadata);
  }
  if (Object.keys(change).length === 0) return link;
  return updateLinkRow(trx, referenceNumber, change, now);
}

/** The intents a link of the caller's made, newest first. */
export async function linkIntents(
  database: Database,
  caller: Caller,
  referenceNumber: string,
  window: { limit: number; offset: number },
) {
  const link = await visibleLink(database.db, caller, referenceNumber);
  return listLinkIntents(database, link.reference_number, window);
}
