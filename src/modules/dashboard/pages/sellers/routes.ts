import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { SELLER_STATUSES } from '../../../../db/schema.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { literalUnion } from '../../../../http/schemas.js';
import { NATIONAL_PHONE_EXAMPLE } from '../../../../lib/phone.js';
import { SELLER_NAME_MAX } from '../../../sellers/schemas.js';
import * as sellers from '../../../sellers/service.js';
import { at, callerOf, langOf, requireSession, sendPage } from '../../context.js';
import { formState, type Refusal } from '../../form-errors.js';
import { recordSellerUpdate } from '../../../audit/acts.js';
import { recordAct } from '../../../audit/record.js';
import { dashboardWrite, Flash } from '../../write.js';
import {
  BLANK_SELLER,
  EditSellerForm,
  NewSellerForm,
  postedValues,
  readSellerForm,
  sellerRefusal,
  statusWords,
} from './form.js';
import { choices, detail, drawSeller, PAGE_SIZE, SELLERS, withBalances, wordsOf } from './page.js';
import { sellerPayOutPages } from './payout.js';
import type { SellerFormValues } from './view.js';
import { pageQuery } from '../../page-query.js';

const PageNumber = Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 }));
const ListQuery = pageQuery({
  ...Flash,
  page: PageNumber,
  status: Type.Optional(literalUnion(['', ...SELLER_STATUSES])),
});
const FlashQuery = pageQuery(Flash);
// `page` is the activity's page, `payouts` and `payments` those lists' pages.
const SellerQuery = pageQuery({ ...Flash, page: PageNumber, payouts: PageNumber, payments: PageNumber });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

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
    {
      values,
      ...choices(request),
      nameMax: SELLER_NAME_MAX,
      phoneExample: NATIONAL_PHONE_EXAMPLE,
      ...formState(refusal),
    },
    status,
  );
}

/**
 * The Sellers pages (issue 52 item 5): the sellers of the session's mode, newest first, with their
 * balances for `balance.read`; a new seller; a seller's page (page.ts) with its details, balance,
 * activity, payouts, payments and statements, its edit form (name, phone, commission, payout
 * schedule, ACTIVE or DISABLED) and its Pay out form (payout.ts). Every change goes through
 * sellers/service.ts or payouts/service.ts; changes need `sellers.manage`, a payout `payouts.create`.
 */
export const sellerPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, database } = app.services;
  const manage = { dashboard: 'sellers.manage', write: FORM_WRITE } as const;

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
      return sendPage(request, reply, 'sellers', {
        statuses: SELLER_STATUSES,
        statusWords: statusWords(wordsOf(request).t),
        filters: { status: status ?? '' },
        filterQuery: status ? new URLSearchParams({ status }).toString() : '',
        items: await withBalances(db, request, result.items),
        total: result.total,
        page,
        pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
      });
    },
  );

  app.get(
    at(`${SELLERS}/new`),
    { config: { dashboard: 'sellers.manage' }, schema: { hide: true, querystring: FlashQuery } },
    async (request, reply) => drawForm(request, reply, BLANK_SELLER),
  );

  app.post(at(SELLERS), { config: manage, schema: { hide: true, body: NewSellerForm } }, async (request, reply) =>
    dashboardWrite(
      request,
      reply,
      `${SELLERS}/new`,
      async (trx, _session, caller) => {
        const seller = await sellers.createSeller(trx, caller, readSellerForm(request.body, langOf(request)));
        await recordAct(trx, request, { action: 'seller.created', target: { kind: 'seller', id: seller.id } });
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
    { config: { dashboard: 'payments.read' }, schema: { hide: true, params: IdParams, querystring: SellerQuery } },
    async (request, reply) =>
      drawSeller(database, request, reply, request.params.id, {
        pages: { activity: request.query.page, payouts: request.query.payouts, payments: request.query.payments },
      }),
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
          const input = readSellerForm(request.body, langOf(request));
          // Only what differs is written (the service compares): saving an unchanged form sends no event.
          const before = await sellers.getSeller(trx, caller, request.params.id);
          const after = await sellers.updateSeller(trx, caller, request.params.id, {
            ...input,
            status: request.body.status,
          });
          await recordSellerUpdate(trx, request, before, after);
          return { redirect: detail(request.params.id) };
        },
        (error) => {
          const refusal = sellerRefusal(error, wordsOf(request).t);
          return refusal
            ? drawSeller(database, request, reply, request.params.id, {
                refused: { refusal, values: postedValues(request.body) },
                status: error.status,
              })
            : undefined;
        },
      ),
  );

  await app.register(sellerPayOutPages);
};
