/**
 * The seller forms: their fields as posted, read into the sellers service's input (every wrong
 * field refused at once), and a refusal (the form's or the service's) as the words by each field.
 */
import { Type, type Static } from 'typebox';
import {
  SELLER_PAYOUT_SCHEDULES,
  SELLER_STATUSES,
  type SellerPayoutSchedule,
  type SellerStatus,
} from '../../../../db/schema.js';
import type { ApiError } from '../../../../http/errors.js';
import { literalUnion } from '../../../../http/schemas.js';
import { fillText, formatAmountInput, readAmount, type Lang } from '../../../../lib/i18n.js';
import { walletPhone } from '../../../../lib/phone.js';
import { MAX_BPS, SELLER_NAME_MAX } from '../../../sellers/schemas.js';
import type { CreateSellerInput } from '../../../sellers/service.js';
import type { SellerView } from '../../../sellers/views.js';
import { fieldChecks, refusalOf, type FormFields, type Refusal } from '../../form-errors.js';
import type { Dictionary } from '../../i18n.js';
import { Token } from '../../write.js';
import type { SellerFormValues } from './view.js';

// Loose lengths on purpose: a value the form refuses is shown back on the form with why.
const Fields = {
  ...Token,
  name: Type.String({ maxLength: 1000 }),
  phone: Type.String({ maxLength: 40 }),
  commission: Type.Optional(Type.String({ maxLength: 40 })),
  // Optional as the API's is, so the service applies one default for both: left out, a new seller is
  // MANUAL and an edit keeps the schedule it has.
  payoutSchedule: Type.Optional(literalUnion(SELLER_PAYOUT_SCHEDULES)),
};
export const NewSellerForm = Type.Object(Fields, { additionalProperties: false });
export const EditSellerForm = Type.Object(
  { ...Fields, status: literalUnion(SELLER_STATUSES) },
  { additionalProperties: false },
);
type NewForm = Static<typeof NewSellerForm>;
type EditForm = Static<typeof EditSellerForm>;

/** The new-seller form as first drawn. */
export const BLANK_SELLER: SellerFormValues = {
  name: '',
  phone: '',
  commission: '',
  status: 'ACTIVE',
  payoutSchedule: 'MANUAL',
};

/** The form as typed, to draw it again. */
export function postedValues(form: NewForm | EditForm): SellerFormValues {
  return {
    name: form.name,
    phone: form.phone,
    commission: form.commission ?? '',
    status: 'status' in form ? form.status : 'ACTIVE',
    payoutSchedule: form.payoutSchedule ?? 'MANUAL',
  };
}

/** A seller's own values in its edit form: the commission as a percentage written in the page's language. */
export function sellerValues(seller: SellerView, lang: Lang): SellerFormValues {
  return {
    name: seller.name,
    phone: seller.phone,
    // Basis points are hundredths of a percent, as centimes are of an MRU: the same exact writing.
    commission: formatAmountInput(seller.commissionBps, lang),
    status: seller.status,
    payoutSchedule: seller.payoutSchedule,
  };
}

/**
 * A commission as typed ("12.5", "12,50 %") in basis points, exactly: read as an MRU amount is
 * (whole digits and at most 2 decimals, never through a float), so 12.34 % is 1,234 bps. Empty is 0,
 * the API's default.
 */
export function commissionBps(text: string, lang: Lang): number | undefined {
  const trimmed = text.trim().replace(/\s*%$/, '');
  if (trimmed === '') return 0;
  const bps = readAmount(trimmed, lang, { unit: false });
  return bps !== undefined && bps <= MAX_BPS ? bps : undefined;
}

/**
 * The form's fields as the service's input (name, phone, commission, payout schedule), every wrong
 * one named at once (the schedule is one of its options, or the schema refused the post).
 */
export function readSellerForm(
  form: NewForm | EditForm,
  lang: Lang,
): Required<Omit<CreateSellerInput, 'metadata' | 'payoutSchedule'>> & Pick<CreateSellerInput, 'payoutSchedule'> {
  const checks = fieldChecks();
  const name = form.name.trim();
  if (name === '') checks.refuse('name', 'is required');
  // The API's limit counts code points, as its schema does.
  else if ([...name].length > SELLER_NAME_MAX) checks.refuse('name', `must be at most ${SELLER_NAME_MAX} characters`);
  const phone = form.phone.trim() === '' ? undefined : walletPhone(form.phone);
  if (form.phone.trim() === '') checks.refuse('phone', 'is required');
  else if (phone === undefined) checks.refuse('phone', 'must be a phone number');
  const bps = commissionBps(form.commission ?? '', lang);
  if (bps === undefined) checks.refuse('commission', 'must be a percentage from 0 to 100 with at most 2 decimals');
  checks.finish();
  const read = { name, phone: phone!, commissionBps: bps! };
  return form.payoutSchedule ? { ...read, payoutSchedule: form.payoutSchedule } : read;
}

/** The fields the seller forms' refusals name; the service's `commissionBps` is the form's `commission`. */
const SELLER_FIELDS: FormFields<'sellers'> = {
  fields: [
    { pattern: /^name$/, text: 'fieldSellerName' },
    { pattern: /^phone$/, text: 'fieldSellerPhone' },
    { pattern: /^commission(Bps)?$/, text: 'fieldSellerCommission', as: 'commission' },
  ],
};

/**
 * A refusal of a seller form as the words by each field, or undefined when it is about none of
 * them (then the page it came from says it).
 */
export function sellerRefusal(error: ApiError, t: Dictionary<'sellers'>): Refusal | undefined {
  if (error.code !== 'VALIDATION_ERROR') return undefined;
  const refusal = refusalOf(error, t, SELLER_FIELDS);
  if (Object.keys(refusal.problems).length === 0) return undefined;
  const chars = String(SELLER_NAME_MAX);
  const problems = Object.fromEntries(
    Object.entries(refusal.problems).map(([field, words]) => [field, fillText(words, { chars })]),
  );
  return { problems, error: refusal.error };
}

/** Each status's word, in the page's language (the status itself stays the badge's class). */
export function statusWords(t: Dictionary<'sellers'>): Record<SellerStatus, string> {
  return { ACTIVE: t.sellerStatusActive, DISABLED: t.sellerStatusDisabled };
}

/** Each payout schedule's word, in the page's language. */
export function scheduleWords(t: Dictionary<'sellers'>): Record<SellerPayoutSchedule, string> {
  return { MANUAL: t.sellerScheduleManual, DAILY: t.sellerScheduleDaily };
}
