import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth } from '../../http/context.js';
import { API_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, pageOf, pageWindow } from '../../http/schemas.js';
import { recordSellerUpdate } from '../audit/acts.js';
import { recordAct } from '../audit/record.js';
import { Balance } from '../payments/balance-routes.js';
import { CreateSellerBody, ListSellersQuery, Seller, SellerId, UpdateSellerBody } from './schemas.js';
import * as sellers from './service.js';
import { sellerView } from './views.js';

const tags = ['Sellers'];
/** A malformed id is the schema's 400 VALIDATION_ERROR, as in a body or a query (decision 079). */
const SellerParams = Type.Object({ id: SellerId });
const SELLER_CODES = ['SELLER_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;

const SELLERS_TEXT =
  "A seller (`SL-...`) is someone a marketplace business sells for: a stall, a shop, a teacher. Each has its own balance in the ledger, under the business, in the key's environment. `commissionBps` is what the business will keep of the seller's share of a payment. A DISABLED seller takes no new split; it keeps its balance and can still be paid out. An intent's `splits` credit each seller its share when it is paid, and its refunds take it back in proportion, even below zero (decision 080).";

/** Sellers (issue 52): the people a marketplace business sells for, each with its own balance. */
export const sellerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;

  app.post(
    '/sellers',
    {
      config: {
        auth: 'secret',
        scope: 'sellers:write',
        write: API_WRITE,
        errorCodes: ['METADATA_TOO_MANY_KEYS', 'METADATA_VALUE_TOO_LONG'],
        openapi: {
          requestExample: {
            name: 'Stall 12 - Fatimetou',
            phone: '+22236000012',
            commissionBps: 500,
            metadata: { market: 'capitale' },
          },
        },
      },
      schema: {
        operationId: 'createSeller',
        summary: 'Create a seller',
        description: `A seller of the key's business and environment: \`name\` (trimmed, not blank), \`phone\` (E.164, where its payouts go), \`commissionBps\` (0 to 10,000, 0 by default), \`payoutSchedule\` (MANUAL by default, or DAILY), \`metadata\`. It starts ACTIVE with a balance of 0. Sends \`seller.created\`.\n\n${SELLERS_TEXT}`,
        tags,
        body: CreateSellerBody,
        response: { 201: Envelope(Seller) },
      },
    },
    async (request, reply) =>
      write(request, reply, 201, async (trx) => {
        const seller = await sellers.createSeller(trx, requireAuth(request.auth), request.body);
        await recordAct(trx, request, { action: 'seller.created', target: { kind: 'seller', id: seller.id } });
        return sellerView(seller);
      }),
  );

  app.get(
    '/sellers',
    {
      config: { auth: 'secret', scope: 'sellers:read' },
      schema: {
        operationId: 'listSellers',
        summary: 'List sellers',
        description: `The sellers of the key's environment, newest first, paginated. Filter: \`status\`.\n\n${SELLERS_TEXT}`,
        tags,
        querystring: ListSellersQuery,
        response: { 200: Envelope(Paginated(Seller)) },
      },
    },
    async (request) => {
      const window = pageWindow(request.query);
      const result = await sellers.listSellers(db, requireAuth(request.auth), {
        status: request.query.status,
        limit: window.limit,
        offset: window.offset,
      });
      return {
        success: true as const,
        data: pageOf(window, { items: result.items.map(sellerView), total: result.total }),
      };
    },
  );

  app.get(
    '/sellers/:id',
    {
      config: { auth: 'secret', scope: 'sellers:read', errorCodes: SELLER_CODES },
      schema: {
        operationId: 'retrieveSeller',
        summary: 'Retrieve a seller',
        description: `One seller by its \`SL-\` id. Another business's seller answers SELLER_NOT_FOUND; one of the other environment, SANDBOX_MISMATCH.\n\n${SELLERS_TEXT}`,
        tags,
        params: SellerParams,
        response: { 200: Envelope(Seller) },
      },
    },
    async (request) => ({
      success: true as const,
      data: sellerView(await sellers.getSeller(db, requireAuth(request.auth), request.params.id)),
    }),
  );

  app.patch(
    '/sellers/:id',
    {
      config: {
        auth: 'secret',
        scope: 'sellers:write',
        write: API_WRITE,
        errorCodes: SELLER_CODES,
        openapi: { requestExample: { status: 'DISABLED' } },
      },
      schema: {
        operationId: 'updateSeller',
        summary: 'Update a seller',
        description: `Changes \`name\`, \`phone\`, \`commissionBps\`, \`status\` (ACTIVE or DISABLED) or \`payoutSchedule\` (MANUAL or DAILY); an empty body is a VALIDATION_ERROR. Sends \`seller.updated\` when something changed; a patch that changes nothing answers the seller as it is.\n\n${SELLERS_TEXT}`,
        tags,
        params: SellerParams,
        body: UpdateSellerBody,
        response: { 200: Envelope(Seller) },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const before = await sellers.getSeller(trx, requireAuth(request.auth), request.params.id);
        const after = await sellers.updateSeller(trx, requireAuth(request.auth), request.params.id, request.body);
        await recordSellerUpdate(trx, request, before, after);
        return sellerView(after);
      }),
  );

  app.get(
    '/sellers/:id/balance',
    {
      config: { auth: 'secret', scope: 'sellers:read', errorCodes: SELLER_CODES },
      schema: {
        operationId: 'retrieveSellerBalance',
        summary: "Retrieve a seller's balance",
        description: `What the seller's ledger account holds, in centimes, in the shape of \`GET /balance\`. Needs \`sellers:read\`, as reading the seller does.\n\n${SELLERS_TEXT}`,
        tags,
        params: SellerParams,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: Envelope(Balance) },
      },
    },
    async (request) => {
      const auth = requireAuth(request.auth);
      const available = await sellers.sellerBalance(db, auth, request.params.id);
      return { success: true as const, data: { available, currency: 'MRU' as const, sandbox: auth.sandbox } };
    },
  );
};
