import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { SELLER_STATUSES } from '../../../../db/schema.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { literalUnion } from '../../../../http/schemas.js';
import { NATIONAL_PHONE_EXAMPLE } from '../../../../lib/phone.js';
import { accountBalance } from '../../../payments/ledger.js';
import { SELLER_NAME_MAX } from '../../../sellers/schemas.js';
import * as sellers from '../../../sellers/service.js';
import type { SellerRow } from '../../../sellers/store.js';
import { sellerView } from '../../../sellers/views.js';
import { at, callerOf, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { formState, type Refusal } from '../../form-errors.js';
import { wordsFor } from '../../i18n.js';
import { dashboardWrite, Flash } from '../../write.js';
import {
  BLANK_SELLER,
  EditSellerForm,
  NewSellerForm,
  postedValues,
  readSellerForm,
  sellerRefusal,
  sellerValues,
  statusWords,
} from './form.js';
import type { SellerFormValues, SellerItem } from './view.js';

const SELLERS = `${DASHBOARD}/sellers`;
const PAGE_SIZE = 20;

const ListQuery = Type.Object(
  {
    ...Flash,
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    status: Type.Optional(literalUnion(['', ...SELLER_STATUSES])),
  },
  { additionalProperties: false },
);
const FlashQuery = Type.Object(Flash, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const detail = (id: string) => `${SELLERS}/${encodeURIComponent(id)}`;

function wordsOf(request: FastifyRequest) {
  const lang = langOf(request);
  return { lang, t: wordsFor('sellers', lang) };
}

/** A seller with what its ledger account holds (its row is already read: no second lookup). */
async function withBalance(db: Parameters<typeof accountBalance>[0], row: SellerRow): Promise<SellerItem> {
  const balance = await accountBalance(db, row.environment, { kind: 'seller', ownerId: row.id });
  return { view: sellerView(row), balance };
}

function drawForm(
  request: FastifyRequest,
  reply: FastifyReply,
  values: SellerFormValues,
  refusal?: Refusal,
  status = 200,
): Promise<FastifyReply> {
  return sendPage(
    request,
    reply,
    'seller-new',
    { values, nameMax: SELLER_NAME_MAX, phoneExample: NATIONAL_PHONE_EXAMPLE, ...formState(refusal) },
    status,
  );
}

/**
 * The Sellers pages (issue 52 item 5): the sellers of the session's mode with their balances,
 * newest first; a new seller; a seller's page with its details, its balance and its edit form
 * (name, phone, commission, ACTIVE or DISABLED). Every change goes through sellers/service.ts;
 * changes are for owners. A payment's split between sellers is not shown yet (a later step).
 */
export const sellerPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;
  const manage = { dashboard: 'sellers.manage', write: FORM_WRITE } as const;

  /** A seller's page, with the edit form as typed and its refusal when there is one. */
  async function drawSeller(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    refused?: { refusal: Refusal; values: SellerFormValues; status: number },
  ): Promise<FastifyReply> {
    const { lang, t } = wordsOf(request);
    const row = await sellers.getSeller(db, callerOf(requireSession(request)), id);
    const seller = await withBalance(db, row);
    return sendPage(
      request,
      reply,
      'seller',
      {
        seller,
        statuses: SELLER_STATUSES,
        statusWords: statusWords(t),
        values: refused?.values ?? sellerValues(seller.view, lang),
        nameMax: SELLER_NAME_MAX,
        phoneExample: NATIONAL_PHONE_EXAMPLE,
        ...formState(refused?.refusal),
      },
      refused?.status ?? 200,
    );
  }

  app.get(
    at(SELLERS),
    { config: { dashboard: 'payments.read' }, schema: { hide: true, querystring: ListQuery } },
    async (request, reply) => {
      const { status } = request.query;
      const page = request.query.page ?? 1;
      const result = await sellers.listSellers(db, callerOf(requireSession(request)), {
        status: status || undefined,
        limit: PAGE_SIZE,
        offset: (page - 1) * PAGE_SIZE,
      });
      const items: SellerItem[] = [];
      for (const row of result.items) items.push(await withBalance(db, row));
      return sendPage(request, reply, 'sellers', {
        statuses: SELLER_STATUSES,
        statusWords: statusWords(wordsOf(request).t),
        filters: { status: status ?? '' },
        filterQuery: status ? new URLSearchParams({ status }).toString() : '',
        items,
        total: result.total,
        page,
        pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
      });
    },
  );

  app.get(
    at(`${SELLERS}/new`),
    { config: { dashboard: 'sellers.manage' }, schema: { hide: true, querystring: FlashQuery } },
    async (request, reply) => {
      return drawForm(request, reply, BLANK_SELLER);
    },
  );

  app.post(at(SELLERS), { config: manage, schema: { hide: true, body: NewSellerForm } }, async (request, reply) =>
    dashboardWrite(
      request,
      reply,
      `${SELLERS}/new`,
      async (trx, _session, caller) => {
        const seller = await sellers.createSeller(trx, caller, readSellerForm(request.body));
        return { redirect: detail(seller.id) };
      },
      (error) => {
        const refusal = sellerRefusal(error, wordsOf(request).t);
        return refusal ? drawForm(request, reply, postedValues(request.body), refusal, error.status) : undefined;
      },
    ),
  );

  app.get(
    at(`${SELLERS}/:id`),
    { config: { dashboard: 'payments.read' }, schema: { hide: true, params: IdParams, querystring: FlashQuery } },
    async (request, reply) => drawSeller(request, reply, request.params.id),
  );

  app.post(
    at(`${SELLERS}/:id`),
    { config: manage, schema: { hide: true, params: IdParams, body: EditSellerForm } },
    async (request, reply) =>
      dashboardWrite(
        request,
        reply,
        detail(request.params.id),
        async (trx, _session, caller) => {
          const input = readSellerForm(request.body);
          // Only what differs is written (the service compares): saving an unchanged form sends no event.
          await sellers.updateSeller(trx, caller, request.params.id, { ...input, status: request.body.status });
          return { redirect: detail(request.params.id) };
        },
        (error) => {
          const refusal = sellerRefusal(error, wordsOf(request).t);
          return refusal
            ? drawSeller(request, reply, request.params.id, {
                refusal,
                values: postedValues(request.body),
                status: error.status,
              })
            : undefined;
        },
      ),
  );
};
