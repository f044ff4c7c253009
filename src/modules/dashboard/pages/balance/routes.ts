import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../../../../db/schema.js';
import { formatUtcMonth, type Lang } from '../../../../lib/i18n.js';
import type { Caller } from '../../../../http/context.js';
import { startDownload } from '../../../../http/downloads.js';
import { ApiError, invalid } from '../../../../http/errors.js';
import { parseDateFilter } from '../../../../http/schemas.js';
import {
  BALANCE_TRANSACTION_TYPES,
  balanceTransactionViewIn,
  exportBalanceTransactions,
  listBalanceTransactions,
  type BalanceTransactionType,
} from '../../../payments/balance-transactions.js';
import { balanceTypeLabels } from '../../../payments/balance-type-labels.js';
import { accountBalance } from '../../../payments/ledger.js';
import { balanceStatement, monthPeriod, statementFile, statementMonths } from '../../../payments/statements.js';
import { at, callerOf, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { wordsFor, type Dictionary } from '../../i18n.js';
import { sourceHref } from '../../source-links.js';
import { Flash } from '../../write.js';
import type { BalanceRow, StatementLink } from './view.js';
import { pageQuery } from '../../page-query.js';

const BALANCE = `${DASHBOARD}/balance`;

export function balanceRow(view: ReturnType<typeof balanceTransactionViewIn>): BalanceRow {
  return { ...view, sourceHref: sourceHref(view.source) };
}
const PAGE_SIZE = 20;
/** What the API's `source` filter takes: a payment intent's or an order's reference. */
const SOURCE = /^(PI|OR)-[0-9]{16}$/;
/** What a date field of the filter form sends. */
const DAY = /^\d{4}-\d{2}-\d{2}$/;

// Loose on purpose: a filter the page cannot read is shown on the page with what is wrong with it.
const ListQuery = pageQuery({
  ...Flash,
  type: Type.Optional(Type.String({ maxLength: 40 })),
  source: Type.Optional(Type.String({ maxLength: 64 })),
  from: Type.Optional(Type.String({ maxLength: 40 })),
  to: Type.Optional(Type.String({ maxLength: 40 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
});
// A month's file: `2026-11.csv` or `2026-11.html`.
const StatementParams = Type.Object({ file: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}[.](csv|html)$' }) });
// The list's filters, as the page's export link carries them.
const ExportQuery = pageQuery({
  type: Type.Optional(Type.String({ maxLength: 40 })),
  source: Type.Optional(Type.String({ maxLength: 64 })),
  from: Type.Optional(Type.String({ maxLength: 40 })),
  to: Type.Optional(Type.String({ maxLength: 40 })),
});

function isType(value: string): value is BalanceTransactionType {
  return (BALANCE_TRANSACTION_TYPES as readonly string[]).includes(value);
}

/** A date field of the form (YYYY-MM-DD, start of day for `from`, end of day for `to`); empty is no bound. */
function dateField(value: string | undefined, bound: 'from' | 'to'): Date | undefined {
  if (!value) return undefined;
  if (!DAY.test(value)) {
    throw new ApiError('VALIDATION_ERROR', `query.${bound} is not a valid date.`, [
      { field: `query.${bound}`, message: 'is not a valid date' },
    ]);
  }
  return parseDateFilter(value, bound);
}

/** A date field read, or `invalid` when it is not a date (a 2024-02-30 included). */
function tryDate(value: string | undefined, bound: 'from' | 'to'): Date | undefined | 'invalid' {
  try {
    return dateField(value, bound);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'VALIDATION_ERROR') return 'invalid';
    throw error;
  }
}

interface ReadFilters {
  type?: BalanceTransactionType;
  source?: string;
  from?: Date;
  to?: Date;
}

/** The form's filters as the list reads them, or the message saying which of them it cannot read. */
function readFilters(
  t: Dictionary<'balance'>,
  text: { type: string; source: string; from: string; to: string },
): { filters: ReadFilters; error?: string } {
  const filters: ReadFilters = {};
  const bad: string[] = [];
  if (text.type) {
    if (isType(text.type)) filters.type = text.type;
    else bad.push(t.type);
  }
  if (text.source) {
    if (SOURCE.test(text.source)) filters.source = text.source;
    else bad.push(t.source);
  }
  const from = tryDate(text.from, 'from');
  const to = tryDate(text.to, 'to');
  if (from === 'invalid') bad.push(t.from);
  else if (from) filters.from = from;
  if (to === 'invalid') bad.push(t.to);
  else if (to) filters.to = to;
  if (bad.length > 0) return { filters, error: t.badFilters.replace('{fields}', bad.join(', ')) };
  if (filters.from && filters.to && filters.from > filters.to) return { filters, error: t.fromAfterTo };
  return { filters };
}

/** The months offered a statement, each with its files, named in the dashboard's language. */
async function statementLinks(db: Kysely<DB>, caller: Caller, lang: Lang): Promise<StatementLink[]> {
  const months = await statementMonths(db, caller);
  return months.map((month, index) => ({
    month: month.label,
    name: formatUtcMonth(month.from, lang),
    current: index === 0,
    csvUrl: `${BALANCE}/statements/${month.label}.csv`,
    htmlUrl: `${BALANCE}/statements/${month.label}.html`,
  }));
}

/**
 * The Balance page: the available balance, the monthly statements (CSV and printable page), and
 * the balance transactions behind it (what moved the merchant's account, fee and net of each)
 * newest first, with their CSV export.
 */
export const balancePages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;

  app.get(
    at(BALANCE),
    { config: { dashboard: 'balance.read' }, schema: { hide: true, querystring: ListQuery } },
    async (request, reply) => {
      const session = requireSession(request);
      const caller = callerOf(session);
      const lang = langOf(request);
      const t = wordsFor('balance', lang);
      // What the form shows back, as typed (a reference in capitals, without the spaces of a paste).
      const text = {
        type: request.query.type ?? '',
        source: (request.query.source ?? '').trim().toUpperCase(),
        from: (request.query.from ?? '').trim(),
        to: (request.query.to ?? '').trim(),
      };
      const page = request.query.page ?? 1;
      const { filters, error } = readFilters(t, text);
      const [available, statements, result] = await Promise.all([
        accountBalance(db, caller.environment, { kind: 'merchant', ownerId: caller.businessId }),
        statementLinks(db, caller, langOf(request)),
        error
          ? { items: [], total: 0 }
          : listBalanceTransactions(db, caller, { ...filters, limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE }),
      ]);
      const filterQuery = new URLSearchParams();
      for (const [name, value] of Object.entries(text)) if (value) filterQuery.set(name, value);
      // The export takes the list's filters, all of them.
      const exportQueryText = filterQuery.toString();
      return sendPage(
        request,
        reply,
        'balance',
        {
          available,
          statements,
          types: BALANCE_TRANSACTION_TYPES,
          typeLabels: balanceTypeLabels[lang],
          filters: text,
          filterQuery: filterQuery.toString(),
          exportUrl: `${BALANCE}/export.csv${exportQueryText ? `?${exportQueryText}` : ''}`,
          items: result.items.map((row) => balanceRow(balanceTransactionViewIn(row, lang))),
          total: result.total,
          page,
          pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
          ...(error ? { error } : {}),
        },
        error ? 400 : 200,
      );
    },
  );

  app.get(
    at(`${BALANCE}/export.csv`),
    { config: { dashboard: 'balance.read' }, schema: { hide: true, querystring: ExportQuery } },
    async (request, reply) => {
      const session = requireSession(request);
      const caller = callerOf(session);
      const type = request.query.type?.trim() || undefined;
      if (type !== undefined && !isType(type)) throw invalid('query.type', 'is not a balance transaction type');
      const source = request.query.source?.trim().toUpperCase() || undefined;
      if (source !== undefined && !SOURCE.test(source)) throw invalid('query.source', 'is not a PI- or OR- reference');
      // Read before the first byte is sent: a bad filter is the dashboard's 400 page, not a broken file.
      const filters = {
        type,
        source,
        from: dateField(request.query.from?.trim(), 'from'),
        to: dateField(request.query.to?.trim(), 'to'),
      };
      const file = await startDownload(caller, reply.raw, config.downloads, () => ({
        headers: {
          'Content-Type': 'text/csv; charset=utf-8',
          'Cache-Control': 'no-store',
          'X-Content-Type-Options': 'nosniff',
          'Content-Disposition': `attachment; filename="balance-transactions-${session.environment}.csv"`,
        },
        chunks: exportBalanceTransactions(db, caller, filters),
      }));
      return reply.headers(file.headers).send(file.body);
    },
  );

  // The API's statement of a month (payments/statements.ts) for the session's business and mode,
  // labelled in the dashboard's language, with the API's download limits.
  app.get(
    at(`${BALANCE}/statements/:file`),
    { config: { dashboard: 'balance.read' }, schema: { hide: true, params: StatementParams } },
    async (request, reply) => {
      const caller = callerOf(requireSession(request));
      const [month, format] = request.params.file.split('.') as [string, 'csv' | 'html'];
      // Read before the first byte is sent: a month that does not exist is the dashboard's 400 page.
      const period = monthPeriod(month, 'month');
      const file = await startDownload(caller, reply.raw, config.downloads, async () =>
        statementFile(db, await balanceStatement(db, caller, period), format, langOf(request)),
      );
      return reply.headers(file.headers).send(file.body);
    },
  );
};
