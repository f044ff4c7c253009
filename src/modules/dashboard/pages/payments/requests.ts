import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../../../../db/schema.js';
import { invalid } from '../../../../http/errors.js';
import { readAmount, type Lang } from '../../../../lib/i18n.js';
import { walletPhone } from '../../../../lib/phone.js';
import { REQUEST_LIFETIME, REQUEST_MESSAGE_MAX } from '../../../requests/schemas.js';
import { requestsOfIntent } from '../../../requests/store.js';
import { fieldChecks, type FormFields } from '../../form-errors.js';
import { Token } from '../../write.js';
import type { RequestFormValues } from './view.js';

/** The form's expiry in minutes: the API's lifetime in seconds, in whole minutes (1 to 15). */
export const REQUEST_MINUTES = {
  min: REQUEST_LIFETIME.min / 60,
  max: REQUEST_LIFETIME.max / 60,
  default: REQUEST_LIFETIME.default / 60,
} as const;

/** How many of an intent's requests its page lists, newest first. */
const SHOWN_REQUESTS = 20;

export const RequestForm = Type.Object(
  {
    ...Token,
    phone: Type.String({ maxLength: 40 }),
    expiresIn: Type.String({ maxLength: 10 }),
    message: Type.Optional(Type.String({ maxLength: 1000 })),
    amount: Type.Optional(Type.String({ maxLength: 20 })),
  },
  { additionalProperties: false },
);

/** The request form as first drawn. */
export const BLANK_REQUEST: RequestFormValues = {
  phone: '',
  expiresIn: String(REQUEST_MINUTES.default),
  message: '',
  amount: '',
};

/**
 * The fields the request form's refusals name: what was typed, and the refusals about the phone
 * (no wallet, the payer muted the business, too many requests to it). A refusal about the intent
 * (a request pending, no longer payable) is the page's line, as the other actions' are.
 */
export const REQUEST_FIELDS: FormFields<'payments'> = {
  fields: [
    { pattern: /^phone$/, text: 'fieldRequestPhone' },
    { pattern: /^expiresIn$/, text: 'fieldRequestExpiry' },
    { pattern: /^message$/, text: 'fieldRequestMessage' },
    { pattern: /^amount$/, text: 'fieldAmount' },
  ],
  codes: {
    AMOUNT_OUT_OF_RANGE: { field: 'amount', text: 'fieldAmountRange' },
    WALLET_NOT_FOUND: { field: 'phone', text: 'fieldRequestNoWallet' },
    PAYMENT_REQUESTS_MUTED: { field: 'phone', text: 'fieldRequestMuted' },
    TOO_MANY_PAYMENT_REQUESTS: { field: 'phone', text: 'fieldRequestTooMany' },
  },
};

/** The form read as the service takes it, every wrong field named at once. */
export function readRequestForm(values: RequestFormValues, lang: Lang) {
  const checks = fieldChecks();
  const phone = walletPhone(values.phone);
  if (phone === undefined) checks.refuse('phone', 'must be a wallet phone number');
  const minutes = values.expiresIn.trim();
  const expiresIn = /^[0-9]{1,2}$/.test(minutes) ? Number(minutes) : NaN;
  if (!(expiresIn >= REQUEST_MINUTES.min && expiresIn <= REQUEST_MINUTES.max)) {
    checks.refuse('expiresIn', `must be ${REQUEST_MINUTES.min} to ${REQUEST_MINUTES.max} minutes`);
  }
  const message = values.message?.trim() ?? '';
  if (message.length > REQUEST_MESSAGE_MAX)
    checks.refuse('message', `must be at most ${REQUEST_MESSAGE_MAX} characters`);
  const amountText = values.amount?.trim() ?? '';
  const amount = checks.read(() => {
    if (amountText === '') return undefined;
    const centimes = readAmount(amountText, lang);
    if (centimes === undefined) throw invalid('amount', 'must be an amount in MRU, such as 250 or 250.50');
    return centimes;
  }, undefined);
  checks.finish();
  return {
    phone: phone!,
    expiresIn: expiresIn * 60,
    ...(message ? { message } : {}),
    ...(amount !== undefined ? { amount } : {}),
  };
}

/** An intent's requests as its page lists them, newest first. */
export async function intentRequests(db: Kysely<DB>, intentId: number) {
  return (await requestsOfIntent(db, intentId, { limit: SHOWN_REQUESTS, offset: 0 })).items;
}
