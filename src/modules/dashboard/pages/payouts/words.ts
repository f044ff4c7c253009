import type { FastifyRequest } from 'fastify';
import { fillText, formatPageAmount } from '../../../../lib/i18n.js';
import { MAX_BATCH_ITEMS } from '../../../payouts/schemas.js';
import type { PayoutQuote } from '../../../payouts/quote.js';
import type { PayoutWords } from './view.js';
import {
  PAYOUT_FAILURE_CODES,
  PAYOUT_STATUSES,
  type PayoutFailureCode,
  type PayoutStatus,
} from '../../../payouts/state.js';
import { langOf } from '../../context.js';
import { wordsFor, type Dictionary } from '../../i18n.js';
import {
  MAX_DESCRIPTION,
  type FileProblem,
  type LineError,
  type LineProblem,
  type PayoutField,
  type Problem,
} from './input.js';

/** The Payouts pages' words: how a status, a failure, a refused field or line, and a refusal read in the page's language. */

// Words: every status and failure code has its own, checked against the lists at compile time.

const STATUS_WORDS = {
  PENDING: 'payoutStatusPending',
  PAID: 'payoutStatusPaid',
  FAILED: 'payoutStatusFailed',
  CANCELLED: 'payoutStatusCancelled',
} as const satisfies Record<PayoutStatus, keyof Dictionary<'payouts'>>;
const FAILURE_WORDS = {
  WALLET_NOT_FOUND: 'payoutFailureWalletNotFound',
  WALLET_LOCKED: 'payoutFailureWalletLocked',
} as const satisfies Record<PayoutFailureCode, keyof Dictionary<'payouts'>>;
export const PROBLEM_WORDS = {
  phone: 'payoutPhoneInvalid',
  amount: 'payoutAmountInvalid',
  amountRange: 'payoutAmountRange',
  description: 'payoutDescriptionTooLong',
} as const satisfies Record<Problem, keyof Dictionary<'payouts'>>;
const LINE_WORDS = {
  phone: 'lineBadPhone',
  amount: 'lineBadAmount',
  amountRange: 'lineAmountRange',
  description: 'lineDescriptionTooLong',
  columns: 'lineColumns',
  tooMany: 'lineTooMany',
} as const satisfies Record<LineProblem, keyof Dictionary<'payouts'>>;
const FILE_WORDS = {
  unreadable: 'batchFileUnreadable',
  header: 'batchFileHeader',
  empty: 'batchFileEmpty',
  notText: 'batchFileNotText',
} as const satisfies Record<FileProblem['kind'], keyof Dictionary<'payouts'>>;
export const FIELD_WORDS = {
  amount: 'amountMru',
  phone: 'destinationPhone',
  description: 'description',
} as const satisfies Record<PayoutField, keyof Dictionary<'payouts'>>;
/** The refusals a write sends back with `?error=` that these pages word themselves. */
const REFUSAL_WORDS: Partial<Record<string, keyof Dictionary<'payouts'>>> = {
  INSUFFICIENT_FUNDS: 'payoutInsufficientFundsLater',
  PAYOUT_NOT_PENDING: 'payoutNotPending',
  AMOUNT_OUT_OF_RANGE: 'payoutAmountRefused',
};

export function wordsOf(request: FastifyRequest) {
  const lang = langOf(request);
  return { t: wordsFor('payouts', lang), mru: (centimes: number) => formatPageAmount(centimes, lang) };
}

/** How the pages name statuses and failures, in the page's language. */
export function payoutWords(t: Dictionary<'payouts'>): PayoutWords {
  return {
    status: Object.fromEntries(PAYOUT_STATUSES.map((status) => [status, t[STATUS_WORDS[status]]])) as Record<
      PayoutStatus,
      string
    >,
    failure: Object.fromEntries(PAYOUT_FAILURE_CODES.map((code) => [code, t[FAILURE_WORDS[code]]])) as Record<
      PayoutFailureCode,
      string
    >,
  };
}

/** The page's own words for a refusal sent back by a write, or nothing (then the catalogue's are shown). */
export function refusal(t: Dictionary<'payouts'>, code: string | undefined): { error?: string } {
  // The code comes from the query: only the table's own entries are looked up.
  const word = code !== undefined && Object.hasOwn(REFUSAL_WORDS, code) ? REFUSAL_WORDS[code] : undefined;
  return word ? { error: t[word] } : {};
}

export function lineText(t: Dictionary<'payouts'>, error: LineError, maxAmount: string): string {
  const max =
    error.problem === 'tooMany' ? MAX_BATCH_ITEMS : error.problem === 'description' ? MAX_DESCRIPTION : maxAmount;
  return fillText(t[LINE_WORDS[error.problem]], { value: error.value, max: String(max) });
}

export function fileText(t: Dictionary<'payouts'>, problem: FileProblem): string {
  return fillText(t[FILE_WORDS[problem.kind]], problem.kind === 'unreadable' ? { line: String(problem.line) } : {});
}

/** Why a payout (or a batch) cannot be sent: the balance available beside what it needs. */
export function shortOfFunds(request: FastifyRequest, quote: PayoutQuote): string {
  const { t, mru } = wordsOf(request);
  return fillText(t.payoutInsufficientFunds, { available: mru(quote.available), needed: mru(quote.total) });
}
