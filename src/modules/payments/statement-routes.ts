import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SELLER_ID_PATTERN } from '../../db/schema.js';
import { requireAuth, type AuthContext } from '../../http/context.js';
import { DOWNLOAD_LIMITS_DESCRIPTION, startDownload } from '../../http/downloads.js';
import { Envelope, literalUnion } from '../../http/schemas.js';
import { DEFAULT_LANG, LANGS, type Lang } from '../../lib/i18n.js';
import { TransactionType } from './balance-routes.js';
import { balanceOwner, type SellerLookup } from './balance-transactions.js';
import {
  balanceStatement,
  monthPeriod,
  rangePeriod,
  STATEMENT_FORMATS,
  statementFile,
  statementView,
  type StatementFormat,
  type StatementPeriod,
} from './statements.js';

const tags = ['Balance'];

const Instant = (description: string) => Type.String({ format: 'date-time', description });
const Centimes = (description: string) => Type.Integer({ description: `${description}, in centimes` });

export const BalanceStatement = Type.Object(
  {
    period: Type.Object({
      from: Instant('The first instant of the period: 00:00 UTC of its first day (included)'),
      to: Instant('The first instant after the period: 00:00 UTC of the day after its last day (excluded)'),
    }),
    business: Type.Object({ id: Type.String(), name: Type.String() }),
    seller: Type.Optional(
      Type.Object(
        { id: Type.String(), name: Type.String() },
        { description: "The seller whose statement this is (with `seller`); absent from the business's own" },
      ),
    ),
    currency: Type.Literal('MRU'),
    sandbox: Type.Boolean(),
    openingBalance: Centimes('The sum of `net` of every balance transaction created before `period.from`'),
    closingBalance: Centimes('openingBalance + the sum of `net` of the transactions of the period'),
    transactionCount: Type.Integer({ description: 'How many balance transactions the period has' }),
    totals: Type.Array(
      Type.Object({
        type: TransactionType,
        count: Type.Integer(),
        gross: Centimes('The sum of `amount` of the type in the period'),
        fees: Centimes('The sum of `fee`'),
        net: Centimes('The sum of `net`'),
      }),
      { description: 'One entry per balance transaction type, zeros included, always in the same order' },
    ),
  },
  { title: 'BalanceStatement' },
);

const FileOptions = {
  seller: Type.Optional(
    Type.String({
      pattern: SELLER_ID_PATTERN,
      description: "A seller's statement (SL-...): its own balance transactions, in the same shape",
    }),
  ),
  format: Type.Optional(
    literalUnion(STATEMENT_FORMATS, {
      description:
        '`json` (the default): the figures. `csv`: a download with the figures, then every transaction of the period, oldest first. `html`: the same as a printable page',
    }),
  ),
  lang: Type.Optional(
    literalUnion(LANGS, { description: 'The language of the labels of `csv` and `html` (default `en`)' }),
  ),
};

const MonthParams = Type.Object({
  period: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$', description: 'A UTC month, YYYY-MM' }),
});

const Day = (description: string) => Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description });

const RangeQuery = Type.Object(
  {
    from: Day('The first UTC day of the statement, YYYY-MM-DD'),
    to: Day('The last UTC day of the statement (included), YYYY-MM-DD; at most 366 days in all'),
    ...FileOptions,
  },
  { additionalProperties: false },
);

const statementResponse = { 200: Envelope(BalanceStatement) };

/** What the docs of both statements say of their files. */
const STATEMENT_FILES =
  'With `format=csv`, a download (`statement-<period>.csv`): the same figures as a summary block, a blank line, then a header row and every transaction of the period in the order the balance took them, oldest first: id, date, type and description in the language of the file, source, gross, fee, net and the balance after it (amounts in MRU with two decimals after a dot, no grouping, the headers saying MRU; decision 086; text cells a spreadsheet would run as a formula start with an apostrophe, and an apostrophe follows each `;`, tab or line break that a formula would follow). With `format=html`, a printable page (A4; cards on a phone) of the same. `lang` (en, fr, ar) chooses the language of both; both are streamed. ' +
  DOWNLOAD_LIMITS_DESCRIPTION +
  " A period that matches the pattern but is not in the calendar answers STATEMENT_PERIOD_INVALID; a malformed one, VALIDATION_ERROR. A statement covers the whole balance of its period: it takes no `type` or `source`. With `seller` (SL-...), the statement of the balance of that seller instead (its balance transactions, decision 082), in the same shape, `seller` naming it (a line of the CSV summary); a malformed seller id is VALIDATION_ERROR, another business's or none SELLER_NOT_FOUND, the other environment's SANDBOX_MISMATCH.";
/** What the docs of both statements say of their figures. */
const STATEMENT_FIGURES =
  "the opening balance (the sum of `net` of every balance transaction of the key's environment created before the period), the totals of the period by type (one entry per type, in a fixed order: count, gross = sum of `amount`, fees = sum of `fee`, net = sum of `net`), and the closing balance (opening + the period's net), to the centime with `GET /balance/transactions`. `period.to` is exclusive: the first instant after the period.";

/**
 * `GET /dev/balance/statements/{YYYY-MM}` and `GET /dev/balance/statements?from=&to=`: the
 * merchant's balance statement for a UTC month or a range of UTC days, as JSON, CSV or a
 * printable page (statements.ts).
 */
export const statementRoutes: FastifyPluginAsyncTypebox<{ sellerLookup: SellerLookup }> = async (
  app,
  { sellerLookup },
) => {
  const { db, config } = app.services;

  /** The statement of a period, answered in the format asked for. */
  async function answer(
    auth: AuthContext,
    period: StatementPeriod,
    options: { seller?: string | undefined; format?: StatementFormat | undefined; lang?: Lang | undefined },
    reply: FastifyReply,
  ) {
    const caller = await balanceOwner(db, auth, options.seller, sellerLookup);
    const format = options.format ?? 'json';
    if (format === 'json') {
      return { success: true as const, data: statementView(await balanceStatement(db, caller, period)) };
    }
    // A file is a download: its slot is claimed before the statement's figures are read.
    const file = await startDownload(caller, reply.raw, config.downloads, async () =>
      statementFile(db, await balanceStatement(db, caller, period), format, options.lang ?? DEFAULT_LANG),
    );
    return reply.headers(file.headers).send(file.body);
  }

  app.get(
    '/balance/statements/:period',
    {
      config: {
        auth: 'secret',
        scope: 'balance:read',
        errorCodes: ['STATEMENT_PERIOD_INVALID', 'TOO_MANY_DOWNLOADS', 'SELLER_NOT_FOUND', 'SANDBOX_MISMATCH'],
        openapi: { alsoAnswers: ['text/csv', 'text/html'] },
      },
      schema: {
        operationId: 'retrieveBalanceStatement',
        summary: 'Retrieve the balance statement of a month',
        description: `The statement of a UTC month (\`YYYY-MM\`): ${STATEMENT_FIGURES}\n\n${STATEMENT_FILES}`,
        tags,
        params: MonthParams,
        querystring: Type.Object(FileOptions, { additionalProperties: false }),
        response: statementResponse,
      },
    },
    async (request, reply) =>
      answer(requireAuth(request.auth), monthPeriod(request.params.period), request.query, reply),
  );

  app.get(
    '/balance/statements',
    {
      config: {
        auth: 'secret',
        scope: 'balance:read',
        errorCodes: ['STATEMENT_PERIOD_INVALID', 'TOO_MANY_DOWNLOADS', 'SELLER_NOT_FOUND', 'SANDBOX_MISMATCH'],
        openapi: { alsoAnswers: ['text/csv', 'text/html'] },
      },
      schema: {
        operationId: 'retrieveBalanceStatementForRange',
        summary: 'Retrieve the balance statement of a range of days',
        description: `The statement of the UTC days \`from\`..\`to\`, both included, at most 366 days: ${STATEMENT_FIGURES}\n\n${STATEMENT_FILES}`,
        tags,
        querystring: RangeQuery,
        response: statementResponse,
      },
    },
    async (request, reply) =>
      answer(requireAuth(request.auth), rangePeriod(request.query.from, request.query.to), request.query, reply),
  );
};
