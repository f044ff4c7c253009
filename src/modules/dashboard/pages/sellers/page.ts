import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../../../db/database.js';
import { SELLER_PAYOUT_SCHEDULES, SELLER_STATUSES, type DB } from '../../../../db/schema.js';
import type { Caller } from '../../../../http/context.js';
import { formatUtcMonth, type Lang } from '../../../../lib/i18n.js';
import { NATIONAL_PHONE_EXAMPLE } from '../../../../lib/phone.js';
import { balanceTransactionViewIn, listBalanceTransactions } from '../../../payments/balance-transactions.js';
import { balanceTypeLabels } from '../../../payments/balance-type-labels.js';
import { accountBalances } from '../../../payments/ledger.js';
import { statementMonths } from '../../../payments/statements.js';
import { listIntents } from '../../../intents/service.js';
import { listPayouts } from '../../../payouts/service.js';
import { payoutView } from '../../../payouts/views.js';
import { SELLER_NAME_MAX } from '../../../sellers/schemas.js';
import * as sellers from '../../../sellers/service.js';
import type { SellerRow } from '../../../sellers/store.js';
import { sellerView } from '../../../sellers/views.js';
import { allows, callerOf, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { formState, type Refusal } from '../../form-errors.js';
import { wordsFor } from '../../i18n.js';
import { balanceRow } from '../balance/routes.js';
import type { StatementLink } from '../balance/view.js';
import { payoutWords } from '../payouts/words.js';
import { scheduleWords, sellerValues, statusWords } from './form.js';
import type { PayOutForm, SellerFormValues, SellerItem, SellerPayment } from './view.js';

export const SELLERS = `${DASHBOARD}/sellers`;
export const PAGE_SIZE = 20;
/**
 * A seller's page lists its latest payouts and payments, 10 of each; the rest are pages further
 * on the seller's page, since neither the Payouts nor the Payments page filters by seller.
 */
const SHORT_PAGE_SIZE = 10;

export const detail = (id: string) => `${SELLERS}/${encodeURIComponent(id)}`;

export function wordsOf(request: FastifyRequest) {
  const lang = langOf(request);
  return { lang, t: wordsFor('sellers', lang) };
}

/**
 * The sellers with what their ledger accounts hold, one read for all of them, not one a row; a
 * role without `balance.read` sees none (`null`), and the ledger is not read for it.
 */
export async function withBalances(
  db: Kysely<DB>,
  request: FastifyRequest,
  rows: readonly SellerRow[],
): Promise<SellerItem[]> {
  if (!allows(request.dashboard, 'balance.read')) return rows.map((row) => ({ view: sellerView(row), balance: null }));
  const environment = rows[0]?.environment;
  if (environment === undefined) return [];
  const balances = await accountBalances(
    db,
    environment,
    'seller',
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({ view: sellerView(row), balance: balances.get(row.id) ?? 0 }));
}

/** The choices the seller forms offer, named in the page's language. */
export function choices(request: FastifyRequest) {
  const { t } = wordsOf(request);
  return {
    statuses: SELLER_STATUSES,
    statusWords: statusWords(t),
    schedules: SELLER_PAYOUT_SCHEDULES,
    scheduleWords: scheduleWords(t),
  };
}

/** The months offered the seller's statement (the business's own months are the Balance page's). */
async function statementLinks(db: Kysely<DB>, caller: Caller, seller: string, lang: Lang): Promise<StatementLink[]> {
  const months = await statementMonths(db, { ...caller, seller });
  return months.map((month, index) => ({
    month: month.label,
    name: formatUtcMonth(month.from, lang),
    current: index === 0,
    csvUrl: `${detail(seller)}/statements/${month.label}.csv`,
    htmlUrl: `${detail(seller)}/statements/${month.label}.html`,
  }));
}

const pageCount = (total: number, size: number) => Math.max(1, Math.ceil(total / size));

/** The intents whose split names the seller, with what each payment gave it (none before it is paid). */
function sellerPayments(items: Awaited<ReturnType<typeof listIntents>>['items'], seller: string): SellerPayment[] {
  return items.map((intent) => ({
    referenceNumber: intent.reference_number,
    amount: intent.amount ?? intent.amount_paid,
    share: intent.split_shares?.find((share) => share.seller === seller) ?? null,
    status: intent.status,
    createdAt: intent.created_at,
  }));
}

/** What the seller's page draws besides its forms; `pages` are its lists' page numbers. */
export interface SellerPageOptions {
  pages?: { activity?: number | undefined; payouts?: number | undefined; payments?: number | undefined };
  /** The edit form refused: what was typed and why. */
  refused?: { refusal: Refusal; values: SellerFormValues };
  /** The Pay out form refused: what was typed and why. */
  payOut?: PayOutForm;
  status?: number;
}

/** The seller's balance activity, payouts and statements: what `balance.read` lets a member see. */
async function moneyOf(db: Kysely<DB>, caller: Caller, seller: string, lang: Lang, pages: SellerPageOptions['pages']) {
  const activityPage = pages?.activity ?? 1;
  const payoutsPage = pages?.payouts ?? 1;
  const [activity, payouts, statements] = await Promise.all([
    listBalanceTransactions(db, caller, { seller, limit: PAGE_SIZE, offset: (activityPage - 1) * PAGE_SIZE }),
    listPayouts(db, caller, { seller, limit: SHORT_PAGE_SIZE, offset: (payoutsPage - 1) * SHORT_PAGE_SIZE }),
    statementLinks(db, caller, seller, lang),
  ]);
  return {
    activity: {
      items: activity.items.map((item) => balanceRow(balanceTransactionViewIn(item, lang))),
      total: activity.total,
      page: activityPage,
      pages: pageCount(activity.total, PAGE_SIZE),
    },
    payouts: {
      items: payouts.items.map(payoutView),
      total: payouts.total,
      page: payoutsPage,
      pages: pageCount(payouts.total, SHORT_PAGE_SIZE),
    },
    statements,
  };
}

/**
 * A seller's page: its details, the payments whose split names it; with `balance.read` its
 * balance, activity (every balance transaction of it, newest first), payouts with their status and
 * monthly statements; with `sellers.manage` its edit form, with `payouts.create` its Pay out form.
 */
export async function drawSeller(
  database: Database,
  request: FastifyRequest,
  reply: FastifyReply,
  id: string,
  options: SellerPageOptions = {},
): Promise<FastifyReply> {
  const { db } = database;
  const { lang } = wordsOf(request);
  const caller = callerOf(requireSession(request));
  const row = await sellers.getSeller(db, caller, id);
  const paymentsPage = options.pages?.payments ?? 1;
  const [[seller], money, payments] = await Promise.all([
    withBalances(db, request, [row]),
    allows(request.dashboard, 'balance.read') ? moneyOf(db, caller, row.id, lang, options.pages) : null,
    listIntents(database, caller, {
      seller: row.id,
      limit: SHORT_PAGE_SIZE,
      offset: (paymentsPage - 1) * SHORT_PAGE_SIZE,
    }),
  ]);
  return sendPage(
    request,
    reply,
    'seller',
    {
      seller: seller!,
      ...choices(request),
      values: options.refused?.values ?? sellerValues(seller!.view, lang),
      nameMax: SELLER_NAME_MAX,
      phoneExample: NATIONAL_PHONE_EXAMPLE,
      ...formState(options.refused?.refusal),
      typeLabels: balanceTypeLabels[lang],
      activity: money?.activity ?? null,
      payouts: money?.payouts ?? null,
      payoutStatusWords: payoutWords(wordsFor('payouts', lang)).status,
      payments: {
        items: sellerPayments(payments.items, row.id),
        total: payments.total,
        page: paymentsPage,
        pages: pageCount(payments.total, SHORT_PAGE_SIZE),
      },
      statements: money?.statements ?? null,
      payOut: options.payOut ?? { values: { amount: '', description: '' }, problems: {} },
    },
    options.status ?? 200,
  );
}
