import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { renderSVG } from 'uqr';
import { PAYMENT_LINK_STATUSES } from '../../../../db/schema.js';
import type { ApiError } from '../../../../http/errors.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { literalUnion } from '../../../../http/schemas.js';
import { payBaseUrl } from '../../../intents/routes.js';
import { INACTIVE_MESSAGE_MAX, LABEL_MAX } from '../../../links/schemas.js';
import * as links from '../../../links/service.js';
import { linkView } from '../../../links/views.js';
import { at, callerOf, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { formState, type Refusal } from '../../form-errors.js';
import { wordsFor } from '../../i18n.js';
import { partialRefundNote } from '../../refund-note.js';
import { recordLinkUpdate } from '../../../audit/acts.js';
import { recordAct } from '../../../audit/record.js';
import { dashboardWrite, Flash, Token } from '../../write.js';
import { amountText, BLANK_LINK, LinkForm, linkRefusal, postedValues, readLinkForm, statusWords } from './form.js';
import type { LinkFormValues } from './view.js';
import { pageQuery } from '../../page-query.js';

const LINKS = `${DASHBOARD}/links`;
const PAGE_SIZE = 20;

const Page = { page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })) };
const ListQuery = pageQuery({ ...Flash, ...Page, status: Type.Optional(literalUnion(['', ...PAYMENT_LINK_STATUSES])) });
const DetailQuery = pageQuery({ ...Flash, ...Page });
const FlashQuery = pageQuery(Flash);
const RefParams = Type.Object({ ref: Type.String({ minLength: 1, maxLength: 64 }) });
const DeactivateForm = Type.Object(
  { ...Token, inactiveMessage: Type.Optional(Type.String({ maxLength: 4000 })) },
  { additionalProperties: false },
);
const TokenForm = Type.Object(Token, { additionalProperties: false });

const detail = (reference: string) => `${LINKS}/${encodeURIComponent(reference)}`;

function wordsOf(request: FastifyRequest) {
  const lang = langOf(request);
  return { lang, t: wordsFor('links', lang) };
}

function drawForm(
  request: FastifyRequest,
  reply: FastifyReply,
  values: LinkFormValues,
  refusal?: Refusal,
  status = 200,
): Promise<FastifyReply> {
  return sendPage(request, reply, 'link-new', { values, labelMax: LABEL_MAX, ...formState(refusal) }, status);
}

/**
 * The Payment links pages (issue 50): the links of the session's mode, newest first; a new link
 * (fixed or open amount, a limit, an expiry, what to ask the payer; metadata under Advanced); a
 * link's page with its address to copy and share, its QR code and poster, its payments, and its
 * deactivation. Every change goes through links/service.ts; changes need `links.manage`.
 */
export const linkPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, database, config } = app.services;
  const manage = { dashboard: 'links.manage', write: FORM_WRITE } as const;
  /** A refusal of a link's form, in the request's words (the service was told the same most amount). */
  const refusalOf = (request: FastifyRequest, error: ApiError) => {
    const { lang, t } = wordsOf(request);
    return linkRefusal(error, t, config.intentMaxAmount, lang);
  };

  /** A link's page, with the deactivate form's refusal when there is one. */
  async function drawLink(
    request: FastifyRequest,
    reply: FastifyReply,
    reference: string,
    page: number,
    refused?: { refusal: Refusal; inactiveMessage: string; status: number },
  ): Promise<FastifyReply> {
    const caller = callerOf(requireSession(request));
    const { lang, t } = wordsOf(request);
    const row = await links.getLink(db, caller, reference);
    const payments = await links.linkIntents(database, caller, row.reference_number, {
      limit: PAGE_SIZE,
      offset: (page - 1) * PAGE_SIZE,
    });
    const view = linkView(row, payBaseUrl(request));
    return sendPage(
      request,
      reply,
      'link',
      {
        link: { view, amountText: amountText(view, t, lang) },
        statusWords: statusWords(t),
        qr: renderSVG(view.url, { border: 2 }),
        files: { svg: view.qrUrl, png: `${view.url}/qr.png`, poster: `${view.url}/poster?lang=${lang}` },
        inactiveMessage: refused?.inactiveMessage ?? '',
        messageMax: INACTIVE_MESSAGE_MAX,
        payments: payments.items,
        refundNote: partialRefundNote(request),
        total: payments.total,
        page,
        pages: Math.max(1, Math.ceil(payments.total / PAGE_SIZE)),
        ...formState(refused?.refusal),
      },
      refused?.status ?? 200,
    );
  }

  app.get(
    at(LINKS),
    { config: { dashboard: 'payments.read' }, schema: { hide: true, querystring: ListQuery } },
    async (request, reply) => {
      const { status } = request.query;
      const page = request.query.page ?? 1;
      const result = await links.listLinks(db, callerOf(requireSession(request)), {
        status: status || undefined,
        limit: PAGE_SIZE,
        offset: (page - 1) * PAGE_SIZE,
      });
      const { lang, t } = wordsOf(request);
      const payBase = payBaseUrl(request);
      return sendPage(request, reply, 'links', {
        statuses: PAYMENT_LINK_STATUSES,
        statusWords: statusWords(t),
        filters: { status: status ?? '' },
        filterQuery: status ? new URLSearchParams({ status }).toString() : '',
        items: result.items.map((row) => {
          const view = linkView(row, payBase);
          return { view, amountText: amountText(view, t, lang) };
        }),
        total: result.total,
        page,
        pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
      });
    },
  );

  app.get(
    at(`${LINKS}/new`),
    { config: { dashboard: 'links.manage' }, schema: { hide: true, querystring: FlashQuery } },
    async (request, reply) => {
      return drawForm(request, reply, BLANK_LINK);
    },
  );

  app.post(at(LINKS), { config: manage, schema: { hide: true, body: LinkForm } }, async (request, reply) =>
    dashboardWrite(
      request,
      reply,
      `${LINKS}/new`,
      async (trx, _session, caller) => {
        const input = readLinkForm(request.body, langOf(request));
        const link = await links.createLink(trx, caller, input, { maxAmount: config.intentMaxAmount });
        const target = { kind: 'payment_link', id: link.reference_number };
        await recordAct(trx, request, {
          action: 'payment_link.created',
          target,
          details: { amountType: link.amount_type },
        });
        return { redirect: detail(link.reference_number) };
      },
      (error) => {
        const refusal = refusalOf(request, error);
        return refusal ? drawForm(request, reply, postedValues(request.body), refusal, error.status) : undefined;
      },
    ),
  );

  app.get(
    at(`${LINKS}/:ref`),
    { config: { dashboard: 'payments.read' }, schema: { hide: true, params: RefParams, querystring: DetailQuery } },
    async (request, reply) => drawLink(request, reply, request.params.ref, request.query.page ?? 1),
  );

  app.post(
    at(`${LINKS}/:ref/deactivate`),
    { config: manage, schema: { hide: true, params: RefParams, body: DeactivateForm } },
    async (request, reply) => {
      const message = (request.body.inactiveMessage ?? '').trim();
      return dashboardWrite(
        request,
        reply,
        detail(request.params.ref),
        async (trx, _session, caller) => {
          // An empty message clears an earlier one: the payer page then says the shared words.
          const before = await links.getLink(trx, caller, request.params.ref);
          const after = await links.updateLink(trx, caller, request.params.ref, {
            active: false,
            inactiveMessage: message === '' ? null : message,
          });
          await recordLinkUpdate(trx, request, before, after);
          return { redirect: detail(request.params.ref) };
        },
        (error) => {
          const refusal = refusalOf(request, error);
          return refusal
            ? drawLink(request, reply, request.params.ref, 1, {
                refusal,
                inactiveMessage: message,
                status: error.status,
              })
            : undefined;
        },
      );
    },
  );

  app.post(
    at(`${LINKS}/:ref/reactivate`),
    { config: manage, schema: { hide: true, params: RefParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, detail(request.params.ref), async (trx, _session, caller) => {
        const before = await links.getLink(trx, caller, request.params.ref);
        const after = await links.updateLink(trx, caller, request.params.ref, { active: true });
        await recordLinkUpdate(trx, request, before, after);
        return { redirect: detail(request.params.ref) };
      }),
  );
};
