/**
 * The new-link form: its fields as posted, read into the links service's input (every wrong field
 * refused at once), and a refusal (the form's or the service's) as the words shown by each field.
 */
import { Type, type Static } from 'typebox';
import type { PaymentLinkStatus } from '../../../../db/schema.js';
import { type ApiError, type ErrorDetail, invalid } from '../../../../http/errors.js';
import { literalUnion } from '../../../../http/schemas.js';
import { fillText, formatPageAmount, readAmount, type Lang } from '../../../../lib/i18n.js';
import { AMOUNT_TYPES } from '../../../intents/state.js';
import { checkLabel, LINK_FIELD_MESSAGES as M, type CreateLinkInput } from '../../../links/service.js';
import { INACTIVE_MESSAGE_MAX, LABEL_MAX, MAX_LINK_PAYMENTS } from '../../../links/schemas.js';
import type { PaymentLinkView } from '../../../links/views.js';
import { fieldChecks, type Refusal } from '../../form-errors.js';
import type { Dictionary } from '../../i18n.js';
import { metadataLines } from '../../metadata.js';
import { Token } from '../../write.js';
import type { LinkFormValues } from './view.js';

// Loose lengths on purpose: a value the links service refuses is shown back on the form with why.
export const LinkForm = Type.Object(
  {
    ...Token,
    label: Type.String({ maxLength: 1000 }),
    amountType: literalUnion(AMOUNT_TYPES),
    amount: Type.Optional(Type.String({ maxLength: 40 })),
    minAmount: Type.Optional(Type.String({ maxLength: 40 })),
    maxAmount: Type.Optional(Type.String({ maxLength: 40 })),
    maxPayments: Type.Optional(Type.String({ maxLength: 40 })),
    expiresAt: Type.Optional(Type.String({ maxLength: 40 })),
    collectName: Type.Optional(Type.Literal('on')),
    collectNote: Type.Optional(Type.Literal('on')),
    successUrl: Type.Optional(Type.String({ maxLength: 4000 })),
    metadata: Type.Optional(Type.String({ maxLength: 30_000 })),
  },
  { additionalProperties: false },
);
type Form = Static<typeof LinkForm>;

/** The form as first drawn. */
export const BLANK_LINK: LinkFormValues = {
  label: '',
  amountType: 'FIXED',
  amount: '',
  minAmount: '',
  maxAmount: '',
  maxPayments: '',
  expiresAt: '',
  collectName: false,
  collectNote: false,
  successUrl: '',
  metadata: '',
};

/** The form as typed, to draw it again. */
export function postedValues(form: Form): LinkFormValues {
  return {
    label: form.label,
    amountType: form.amountType,
    amount: form.amount ?? '',
    minAmount: form.minAmount ?? '',
    maxAmount: form.maxAmount ?? '',
    maxPayments: form.maxPayments ?? '',
    expiresAt: form.expiresAt ?? '',
    collectName: form.collectName === 'on',
    collectNote: form.collectNote === 'on',
    successUrl: form.successUrl ?? '',
    metadata: form.metadata ?? '',
  };
}

/** An amount in MRU as the payment form reads it ("250", "250,50"); empty is undefined unless `required`. */
function money(field: string, text: string | undefined, required: boolean, lang: Lang): number | undefined {
  if ((text ?? '').trim() === '') {
    if (required) throw invalid(field, M.required);
    return undefined;
  }
  const centimes = readAmount(text!, lang);
  if (centimes === undefined) throw invalid(field, 'must be an amount in MRU, such as 250 or 250.50');
  return centimes;
}

function paymentsLimit(text: string | undefined): number | undefined {
  const trimmed = (text ?? '').trim();
  if (trimmed === '') return undefined;
  if (!/^\d{1,7}$/.test(trimmed) || Number(trimmed) < 1 || Number(trimmed) > MAX_LINK_PAYMENTS) {
    throw invalid('maxPayments', `must be a whole number from 1 to ${MAX_LINK_PAYMENTS}`);
  }
  return Number(trimmed);
}

/**
 * The expiry as a browser's date-time field sends it ("2027-01-31T18:00"), read as UTC: the
 * dashboard writes its dates in UTC, Nouakchott's own time. A date alone ends at that day's end.
 */
function moment(text: string | undefined): string | undefined {
  const trimmed = (text ?? '').trim();
  if (trimmed === '') return undefined;
  const match = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(:\d{2})?)?$/.exec(trimmed);
  const date = match ? new Date(`${match[1]}T${match[2] ?? '23:59'}${match[3] ?? ':00'}Z`) : undefined;
  if (!date || Number.isNaN(date.getTime())) throw invalid('expiresAt', 'must be a date and a time');
  return date.toISOString();
}

/** The form's fields as the service's input; the fields of the other amount type are left out. */
export function readLinkForm(form: Form, lang: Lang): CreateLinkInput {
  const checks = fieldChecks();
  // The service's own reading, here too so that one answer marks the label beside the others.
  const label = checks.read(() => checkLabel(form.label), '');
  const fixed = form.amountType === 'FIXED';
  const amount = fixed ? checks.read(() => money('amount', form.amount, true, lang), undefined) : undefined;
  const minAmount = fixed ? undefined : checks.read(() => money('minAmount', form.minAmount, false, lang), undefined);
  const maxAmount = fixed ? undefined : checks.read(() => money('maxAmount', form.maxAmount, false, lang), undefined);
  const maxPayments = checks.read(() => paymentsLimit(form.maxPayments), undefined);
  const expiresAt = checks.read(() => moment(form.expiresAt), undefined);
  const metadata = checks.read(() => metadataLines(form.metadata), {});
  checks.finish();
  const successUrl = (form.successUrl ?? '').trim();
  return {
    label,
    amountType: form.amountType,
    ...(amount !== undefined ? { amount } : {}),
    ...(minAmount !== undefined ? { minAmount } : {}),
    ...(maxAmount !== undefined ? { maxAmount } : {}),
    ...(maxPayments !== undefined ? { maxPayments } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    collect: { name: form.collectName === 'on', note: form.collectNote === 'on' },
    ...(successUrl ? { successUrl } : {}),
    metadata,
  };
}

type Words = Dictionary<'links'>;
type FieldWord = Extract<keyof Words, `field${string}`>;

/** The words a field's refusal shows unless its message says more (a range, a past date...). */
const FIELD_WORDS: Record<string, FieldWord> = {
  label: 'fieldLinkLabel',
  amount: 'fieldAmount',
  minAmount: 'fieldAmount',
  maxAmount: 'fieldAmount',
  maxPayments: 'fieldMaxPayments',
  expiresAt: 'fieldExpiresAt',
  successUrl: 'fieldSuccessUrl',
  metadata: 'fieldLinkMetadata',
  inactiveMessage: 'fieldInactiveMessage',
};

/** The most characters a field takes, for its words (`{chars}`). */
const FIELD_MAX: Record<string, number> = { label: LABEL_MAX, inactiveMessage: INACTIVE_MESSAGE_MAX };

/**
 * A refusal's words: the service's message compared to the service's own (never read as English),
 * else the field's words. `maxAmount`: the most one payment may be, in centimes.
 */
function wordFor(field: string, detail: ErrorDetail, maxAmount: number): FieldWord {
  const { message } = detail;
  if (message === M.required || message === M.requiredForFixed) return 'fieldRequired';
  if (message === M.amountRange(maxAmount)) return 'fieldLinkAmountRange';
  if (message === M.minAboveMax) return 'fieldMinAboveMax';
  if (message === M.notFuture) return 'fieldExpiresPast';
  // A key of the metadata, refused by its check (the form's own refusal names `metadata` alone).
  if (detail.field.startsWith('body.metadata.')) return 'fieldMetadataLimits';
  return FIELD_WORDS[field]!;
}

/**
 * A refusal of the form (its own reading or the service's, which names `body.minAmount`) as the
 * words shown by each field; undefined when it is about none of them (then the page it came from
 * says it). `maxAmount`: the most one payment may be, in centimes, as the service was told.
 */
export function linkRefusal(error: ApiError, t: Words, maxAmount: number, lang: Lang): Refusal | undefined {
  const problems: Record<string, string> = {};
  if (error.code === 'METADATA_TOO_MANY_KEYS' || error.code === 'METADATA_VALUE_TOO_LONG') {
    problems.metadata = t.fieldMetadataLimits;
  } else if (error.code === 'VALIDATION_ERROR') {
    for (const detail of error.details ?? []) {
      // `body.metadata.key`: the metadata field.
      const field = detail.field.replace(/^body\./, '').split('.')[0]!;
      if (!Object.hasOwn(FIELD_WORDS, field) || problems[field]) continue;
      problems[field] = fillText(t[wordFor(field, detail, maxAmount)], {
        max: formatPageAmount(maxAmount, lang),
        chars: String(FIELD_MAX[field] ?? ''),
      });
    }
  }
  return Object.keys(problems).length > 0 ? { problems, error: t.checkFields } : undefined;
}

/** A link's amount in words: fixed, a range, or any amount. */
export function amountText(link: PaymentLinkView, t: Words, lang: Lang): string {
  const mru = (centimes: number) => formatPageAmount(centimes, lang);
  if (link.amount !== null) return mru(link.amount);
  if (link.minAmount !== null && link.maxAmount !== null) {
    return fillText(t.amountBetween, { min: mru(link.minAmount), max: mru(link.maxAmount) });
  }
  if (link.minAmount !== null) return fillText(t.amountFrom, { min: mru(link.minAmount) });
  if (link.maxAmount !== null) return fillText(t.amountUpTo, { max: mru(link.maxAmount) });
  return t.anyAmount;
}

/** Each status's word, in the page's language (the status itself stays the badge's class). */
export function statusWords(t: Words): Record<PaymentLinkStatus, string> {
  return {
    ACTIVE: t.linkStatusActive,
    INACTIVE: t.linkStatusInactive,
    COMPLETED: t.linkStatusCompleted,
    EXPIRED: t.linkStatusExpired,
  };
}
