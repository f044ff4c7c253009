import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SELLER_ID_PATTERN } from '../../db/schema.js';
import { requireAuth } from '../../http/context.js';
import { DOWNLOAD_LIMITS_DESCRIPTION, startDownload } from '../../http/downloads.js';
import {
  DateFilter,
  Envelope,
  literalUnion,
  Nullable,
  Paginated,
  Pagination,
  pageWindow,
  parseDateFilter,
  Timestamp,
} from '../../http/schemas.js';
import { accountBalance } from './ledger.js';
import {
  BALANCE_SOURCE_KINDS,
  BALANCE_TRANSACTION_TYPES,
  balanceOwner,
  balanceTransactionView,
  exportBalanceTransactions,
  type SellerLookup,
  getBalanceTransaction,
  listBalanceTransactions,
} from './balance-transactions.js';

const tags = ['Balance'];

/** What a balance answers: the merchant's here, a seller's at `GET /sellers/{id}/balance` (sellers module). */
export const Balance = Type.Object({
  available: Type.Integer({ description: 'centimes' }),
  currency: Type.Literal('MRU'),
  sandbox: Type.Boolean(),
});

export const TransactionType = Type.Enum(BALANCE_TRANSACTION_TYPES, { description: 'What moved the balance' });

const SourceReference = Type.String({
  pattern: '^(PI|OR|PO)-[0-9]{16}$',
  description: 'The payment intent (PI-...), order (OR-...) or payout (PO-...) the movement belongs to',
});

export const BalanceTransaction = Type.Object({
  id: Type.String({ description: 'txn_...' }),
  type: TransactionType,
  amount: Type.Integer({ description: 'Gross, in centimes: positive into the balance, negative out of it' }),
  fee: Type.Integer({ description: 'What the platform kept of the gross (negative when a refund returns it)' }),
  net: Type.Integer({ description: 'amount - fee: what the balance moved by' }),
  currency: Type.Literal('MRU'),
  source: Type.Object({
    reference: Type.String(),
    kind: literalUnion(BALANCE_SOURCE_KINDS),
  }),
  description: Type.String(),
  balanceAfter: Nullable(
    Type.Integer({ description: 'The balance once this movement settled; null until it has (about a second)' }),
  ),
  seller: Nullable(
    Type.String({
      description: "The seller (SL-...) whose balance moved; null for the business's own balance (decision 082)",
    }),
  ),
  sandbox: Type.Boolean(),
  createdAt: Timestamp,
});

/** The list's filters: the export takes exactly these (decisions.md, "Lists and exports"). */
const Filters = {
  seller: Type.Optional(
    Type.String({
      pattern: SELLER_ID_PATTERN,
      description: "A seller's balance transactions (SL-...) instead of the business's own",
    }),
  ),
  type: Type.Optional(TransactionType),
  source: Type.Optional(SourceReference),
  from: Type.Optional(DateFilter),
  to: Type.Optional(DateFilter),
};

const ListQuery = Type.Object({ ...Filters, ...Pagination }, { additionalProperties: false });

const ExportQuery = Type.Object(Filters, { additionalProperties: false });

const IdParams = Type.Object({ id: Type.String({ pattern: '^txn_[0-9A-Za-z]{1,40}$' }) });

/**
 * `GET /dev/balance`: the merchant's available balance in the key's environment, and the balance
 * transactions behind it (`/balance/transactions`: list, one, CSV export).
 */
export const balanceRoutes: FastifyPluginAsyncTypebox<{ sellerLookup: SellerLookup }> = async (
  app,
  { sellerLookup },
) => {
  const { db, config } = app.services;
  app.get(
    '/balance',
    {
      config: { auth: 'secret', scope: 'intents:read' },
      schema: {
        operationId: 'retrieveBalance',
        summary: 'Retrieve the merchant balance',
        description:
          "The available balance of the key's environment, in centimes: the sum of the `net` of its balance transactions.",
        tags,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: Envelope(Balance) },
      },
    },
    async (request) => {
      const auth = requireAuth(request.auth);
      const available = await accountBalance(db, auth.environment, { kind: 'merchant', ownerId: auth.businessId });
      return { success: true as const, data: { available, currency: 'MRU' as const, sandbox: auth.sandbox } };
    },
  );

  app.get(
    '/balance/transactions',
    {
      config: { auth: 'secret', scope: 'balance:read', errorCodes: ['SELLER_NOT_FOUND', 'SANDBOX_MISMATCH'] },
      schema: {
        operationId: 'listBalanceTransactions',
        summary: 'List balance transactions',
        description:
          "Every movement of the merchant balance in the key's environment, newest first: payments, refunds, order payments, order refunds and modification adjustments, each with its gross `amount`, the `fee` the platform kept and the `net` that moved the balance. Filters: `type`, `source` (a PI-/OR- reference), `from`, `to`. With `seller` (SL-...), that seller's balance transactions instead (its split shares, what refunds took back, its payouts, their fees and returns; each carries `seller`, and `balanceAfter` is the seller's balance); the business's own carry `seller: null`. A malformed `seller` is 400 VALIDATION_ERROR; another business's, or none, 404 SELLER_NOT_FOUND; the other environment's, 403 SANDBOX_MISMATCH. Needs the `balance:read` scope.",
        tags,
        querystring: ListQuery,
        response: { 200: Envelope(Paginated(BalanceTransaction)) },
      },
    },
    async (request) => {
      const { page, limit, offset } = pageWindow(request.query);
      const auth = requireAuth(request.auth);
      const owner = await balanceOwner(db, auth, request.query.seller, sellerLookup);
      const result = await listBalanceTransactions(db, auth, {
        seller: owner.seller,
        type: request.query.type,
        source: request.query.source,
        from: parseDateFilter(request.query.from, 'from'),
        to: parseDateFilter(request.query.to, 'to'),
        limit,
        offset,
      });
      return {
        success: true as const,
        data: {
          items: result.items.map(balanceTransactionView),
          page,
          limit,
          total: result.total,
          hasMore: result.hasMore,
        },
      };
    },
  );

  app.get(
    '/balance/transactions/export',
    {
      config: {
        auth: 'secret',
        scope: 'balance:read',
        errorCodes: ['TOO_MANY_DOWNLOADS', 'SELLER_NOT_FOUND', 'SANDBOX_MISMATCH'],
        openapi: { csv: true },
      },
      schema: {
        operationId: 'exportBalanceTransactions',
        summary: 'Export balance transactions as CSV',
        description: `The balance transactions that the list's filters take (\`seller\`, \`type\`, \`source\`, \`from\`, \`to\`; all of the business's own when absent) as CSV, streamed, newest first in the order the balance took them, in the API's machine format (amounts in centimes, English descriptions; decision 086), with a header row naming the same fields as the list (id, type, amount, fee, net, currency, sourceReference, sourceKind, description, balanceAfter, createdAt); text cells that a spreadsheet would run as a formula start with an apostrophe, and an apostrophe follows each \`;\`, tab or line break that a formula would follow. ${DOWNLOAD_LIMITS_DESCRIPTION}`,
        tags,
        querystring: ExportQuery,
        produces: ['text/csv'],
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request.auth);
      // Checked before the download starts: an unknown seller is a 404, not a broken file.
      const owner = await balanceOwner(db, auth, request.query.seller, sellerLookup);
      const filters = {
        type: request.query.type,
        source: request.query.source,
        from: parseDateFilter(request.query.from, 'from'),
        to: parseDateFilter(request.query.to, 'to'),
      };
      const file = await startDownload(auth, reply.raw, config.downloads, () => ({
        headers: {
          'Content-Type': 'text/csv; charset=utf-8',
          'Content-Disposition': 'attachment; filename="balance-transactions.csv"',
        },
        chunks: exportBalanceTransactions(db, owner, filters),
      }));
      return reply.headers(file.headers).send(file.body);
    },
  );

  app.get(
    '/balance/transactions/:id',
    {
      config: {
        auth: 'secret',
        scope: 'balance:read',
        errorCodes: ['BALANCE_TRANSACTION_NOT_FOUND', 'SANDBOX_MISMATCH'],
      },
      schema: {
        operationId: 'retrieveBalanceTransaction',
        summary: 'Retrieve a balance transaction',
        description: 'One balance transaction by its `txn_` id.',
        tags,
        params: IdParams,
        response: { 200: Envelope(BalanceTransaction) },
      },
    },
    async (request) => ({
      success: true as const,
      data: balanceTransactionView(await getBalanceTransaction(db, requireAuth(request.auth), request.params.id)),
    }),
  );
};
