import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { renderSVG } from 'uqr';
import { ApiError, invalid } from '../../../../http/errors.js';
import { literalUnion, parseDateFilter } from '../../../../http/schemas.js';
import { payBaseUrl } from '../../../intents/routes.js';
import * as intents from '../../../intents/service.js';
import { AMOUNT_TYPES, INTENT_STATUSES, isAllowed } from '../../../intents/state.js';
import { cancelRequest, createRequest, getRequest } from '../../../requests/service.js';
import { at, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { readAmount, type Lang } from '../../../../lib/i18n.js';
import { formState, isAboutForm, refusalOf, type FormFields } from '../../form-errors.js';
import { eventText, wordsFor } from '../../i18n.js';
import { metadataLines } from '../../metadata.js';
import { intentTimeline, paymentAttempts, searchIntents, sourceAmounts } from '../../queries.js';
import { splitRows } from '../../split.js';
import { partialRefundNote } from '../../refund-note.js';
import { recordRefund } from '../../../audit/acts.js';
import { dashboardWrite, Token } from '../../write.js';
import { PAYMENT_FAILURES, type PaymentFailureCode } from '../../../payments/state.js';
import { CommittedRefusal, FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import type { DashboardSession } from '../../sessions.js';
import type { Refusal } from '../../form-errors.js';
import {
  BLANK_REQUEST,
  intentRequests,
  readRequestForm,
  REQUEST_FIELDS,
  REQUEST_MINUTES,
  RequestForm,
} from './requests.js';
import type { RequestFormValues } from './view.js';
import { REQUEST_MESSAGE_MAX } from '../../../requests/schemas.js';
import { operatorHookFor } from '../../../requests/operator-hook.js';
import { pageQuery } from '../../page-query.js';

const PAGE_SIZE = 20;

const ListQuery = pageQuery({
  status: Type.Optional(literalUnion(['', ...INTENT_STATUSES])),
  from: Type.Optional(Type.String({ maxLength: 10 })),
  to: Type.Optional(Type.String({ maxLength: 10 })),
  q: Type.Optional(Type.String({ maxLength: 500 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  notice: Type.Optional(Type.String({ maxLength: 20 })),
  error: Type.Optional(Type.String({ maxLength: 64 })),
});
const FlashQuery = pageQuery({
  notice: Type.Optional(Type.String({ maxLength: 20 })),
  error: Type.Optional(Type.String({ maxLength: 64 })),
});
const RefParams = Type.Object({ ref: Type.String({ minLength: 1, maxLength: 64 }) });
const RequestParams = Type.Object({
  ref: Type.String({ minLength: 1, maxLength: 64 }),
  id: Type.String({ minLength: 1, maxLength: 64 }),
});
const CreateForm = Type.Object(
  {
    ...Token,
    amountType: literalUnion(AMOUNT_TYPES),
    amount: Type.String({ maxLength: 20 }),
    label: Type.Optional(Type.String({ maxLength: 200 })),
    metadata: Type.Optional(Type.String({ maxLength: 30_000 })),
  },
  { additionalProperties: false },
);
const RefundForm = Type.Object(
  {
    ...Token,
    amount: Type.Optional(Type.String({ maxLength: 20 })),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
const SimulateForm = Type.Object(
  {
    ...Token,
    outcome: Type.Union([Type.Literal('success'), Type.Literal('failure'), Type.Literal('expire')]),
    amount: Type.Optional(Type.String({ maxLength: 20 })),
  },
  { additionalProperties: false },
);
const TokenForm = Type.Object(Token, { additionalProperties: false });

/** A form amount in MRU ("250" or "250,50") as centimes; empty is `undefined` when `optional`. */
function amountField(text: string | undefined, optional: boolean, lang: Lang): number | undefined {
  if ((text ?? '').trim() === '') {
    if (optional) return undefined;
    throw invalid('amount', 'is required');
  }
  const centimes = readAmount(text!, lang);
  if (centimes === undefined) throw invalid('amount', 'must be an amount in MRU, such as 250 or 250.50');
  return centimes;
}

function isPaymentFailure(value: string | null): value is PaymentFailureCode {
  return (PAYMENT_FAILURES as readonly (string | null)[]).includes(value);
}

function dateField(value: string | undefined, bound: 'from' | 'to'): Date | undefined {
  if (!value) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) throw invalid(bound, 'must be a date');
  return parseDateFilter(value, bound);
}

/** The one-time payment form as first drawn. */
const BLANK_PAYMENT = { amountType: 'FIXED', amount: '', label: '', metadata: '' };
/** The fields of the one-time payment form its refusals name. */
const PAYMENT_FIELDS: FormFields<'payments'> = {
  fields: [
    { pattern: /^amount$/, text: 'fieldAmount' },
    { pattern: /^metadata/, text: 'fieldMetadata', as: 'metadata' },
    { pattern: /^label$/, text: 'fieldInvalid' },
  ],
  codes: { AMOUNT_OUT_OF_RANGE: { field: 'amount', text: 'fieldAmountRange' } },
};

const detail = (ref: string) => `${DASHBOARD}/payments/${encodeURIComponent(ref)}`;

export const paymentPages: FastifyPluginAsyncTypebox = async (app) => {
  const { database, db, config } = app.services;
  const create = { dashboard: 'payments.create', write: FORM_WRITE } as const;
  const refund = { dashboard: 'payments.refund', write: FORM_WRITE } as const;

  app.get(
    at(`${DASHBOARD}/payments`),
    { config: { dashboard: 'payments.read' }, schema: { hide: true, querystring: ListQuery } },
    async (request, reply) => {
      const session = requireSession(request);
      const { status, from, to, q } = request.query;
      const page = request.query.page ?? 1;
      const result = await searchIntents(database, session, {
        status: status || undefined,
        from: dateField(from, 'from'),
        to: dateField(to, 'to'),
        q: q?.trim() || undefined,
        limit: PAGE_SIZE,
        offset: (page - 1) * PAGE_SIZE,
      });
      const pages = Math.max(1, Math.ceil(result.total / PAGE_SIZE));
      const filters = new URLSearchParams();
      for (const [name, value] of Object.entries({ status, from, to, q })) if (value) filters.set(name, value);
      return sendPage(request, reply, 'payments', {
        statuses: INTENT_STATUSES,
        filters: { status: status ?? '', from: from ?? '', to: to ?? '', q: q ?? '' },
        filterQuery: filters.toString(),
        items: result.items,
        refundNote: partialRefundNote(request),
        total: result.total,
        page,
        pages,
      });
    },
  );

  app.get(
    at(`${DASHBOARD}/payments/new`),
    { config: { dashboard: 'payments.create' }, schema: { hide: true, querystring: FlashQuery } },
    async (request, reply) => sendPage(request, reply, 'payment-new', { values: BLANK_PAYMENT, ...formState() }),
  );

  app.post(
    at(`${DASHBOARD}/payments`),
    { config: create, schema: { hide: true, body: CreateForm } },
    async (request, reply) =>
      dashboardWrite(
        request,
        reply,
        `${DASHBOARD}/payments/new`,
        async (trx, _session, caller) => {
          const { amountType, label } = request.body;
          const amount = amountField(request.body.amount, amountType === 'OPEN', langOf(request));
          const intent = await intents.createIntent(
            trx,
            caller,
            {
              amountType,
              ...(amount !== undefined ? { amount } : {}),
              ...(label ? { label } : {}),
              metadata: metadataLines(request.body.metadata),
            },
            { maxAmount: config.intentMaxAmount, codeSpace: config.paymentCodeSpace },
          );
          return { redirect: detail(intent.reference_number) };
        },
        (error) => {
          if (!isAboutForm(error, PAYMENT_FIELDS)) return undefined;
          const { _csrf, _idem, ...values } = request.body;
          const refusal = refusalOf(error, wordsFor('payments', langOf(request)), PAYMENT_FIELDS);
          return sendPage(request, reply, 'payment-new', { values, ...formState(refusal) }, error.status);
        },
      ),
  );

  /** A payment's page, with its request form as typed and refused when a request was refused. */
  async function paymentPage(
    request: FastifyRequest,
    session: DashboardSession,
    ref: string,
    form: { values: RequestFormValues; refusal?: Refusal } = { values: BLANK_REQUEST },
  ) {
    const intent = await intents.getIntent(database, session, ref);
    const view = intents.intentView(intent, payBaseUrl(request));
    const [timeline, amounts, attempts, requests, split] = await Promise.all([
      intentTimeline(database, session, intent.reference_number),
      sourceAmounts(database, session, intent.reference_number),
      paymentAttempts(db, { intentId: intent.id }),
      intentRequests(db, intent.id),
      splitRows(db, intent.split_shares),
    ]);
    const now = new Date();
    const lang = langOf(request);
    return {
      intent,
      view,
      // Each event worded in the page's language; its code stays on the line, as its title.
      timeline: timeline.map((event) => ({ ...event, words: eventText(event.event, lang) })),
      amounts,
      attempts,
      split,
      requests,
      requestForm: {
        values: form.values,
        ...formState(form.refusal),
        minutes: REQUEST_MINUTES,
        messageMax: REQUEST_MESSAGE_MAX,
      },
      // A text stored before migration 023 that no version wrote has no words: it is not shown.
      lastFailure: isPaymentFailure(intent.last_failure) ? intent.last_failure : null,
      refundNote: partialRefundNote(request),
      // A FAILED intent is still payable: it keeps its code and can still be paid or expire.
      qr: isAllowed(intent, 'pay', now) ? renderSVG(view.payUrl, { border: 2 }) : null,
      refundable: (intent.amount_paid ?? 0) - intent.total_amount_refunded,
      can: {
        cancel: isAllowed(intent, 'cancel', now),
        pay: isAllowed(intent, 'pay', now),
        expire: isAllowed(intent, 'expire', now),
        refund: isAllowed(intent, 'refund', now),
      },
    };
  }

  app.get(
    at(`${DASHBOARD}/payments/:ref`),
    { config: { dashboard: 'payments.read' }, schema: { hide: true, params: RefParams, querystring: FlashQuery } },
    async (request, reply) =>
      sendPage(request, reply, 'payment', await paymentPage(request, requireSession(request), request.params.ref)),
  );

  app.post(
    at(`${DASHBOARD}/payments/:ref/requests`),
    { config: create, schema: { hide: true, params: RefParams, body: RequestForm } },
    async (request, reply) => {
      const { _csrf, _idem, ...values } = request.body;
      const ref = request.params.ref;
      return dashboardWrite(
        request,
        reply,
        detail(ref),
        async (trx, _session, caller) => {
          await createRequest(trx, caller, ref, readRequestForm(values, langOf(request)), {
            maxAmount: config.intentMaxAmount,
            operatorHook: operatorHookFor(request),
          });
          return { redirect: detail(ref) };
        },
        (error) => {
          if (!isAboutForm(error, REQUEST_FIELDS)) return undefined;
          const refusal = refusalOf(error, wordsFor('payments', langOf(request)), REQUEST_FIELDS);
          return paymentPage(request, requireSession(request), ref, { values, refusal }).then((page) =>
            sendPage(request, reply, 'payment', page, error.status),
          );
        },
      );
    },
  );

  app.post(
    at(`${DASHBOARD}/payments/:ref/requests/:id/cancel`),
    { config: create, schema: { hide: true, params: RequestParams, body: TokenForm } },
    async (request, reply) => {
      const { ref, id } = request.params;
      return dashboardWrite(request, reply, detail(ref), async (trx, _session, caller) => {
        // The page's address names the intent: a request of another intent is not this page's to end.
        if ((await getRequest(trx, caller, id)).intent_reference !== ref) {
          throw new ApiError('PAYMENT_REQUEST_NOT_FOUND', `No payment request ${id} for ${ref}.`);
        }
        await cancelRequest(trx, caller, id);
        return { redirect: detail(ref) };
      });
    },
  );

  app.post(
    at(`${DASHBOARD}/payments/:ref/refund`),
    { config: refund, schema: { hide: true, params: RefParams, body: RefundForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, detail(request.params.ref), async (trx, _session, caller) => {
        const amount = amountField(request.body.amount, true, langOf(request));
        const reason = request.body.reason?.trim();
        const refunded = await intents.refundIntent(trx, caller, request.params.ref, {
          ...(amount !== undefined ? { amount } : {}),
          ...(reason ? { reason } : {}),
        });
        await recordRefund(trx, request, { kind: 'payment_intent', id: refunded.reference_number }, refunded.refunds);
        return { redirect: detail(request.params.ref) };
      }),
  );

  app.post(
    at(`${DASHBOARD}/payments/:ref/cancel`),
    { config: create, schema: { hide: true, params: RefParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, detail(request.params.ref), async (trx, _session, caller) => {
        await intents.cancelIntent(trx, caller, request.params.ref);
        return { redirect: detail(request.params.ref) };
      }),
  );

  app.post(
    at(`${DASHBOARD}/payments/:ref/simulate`),
    { config: create, schema: { hide: true, params: RefParams, body: SimulateForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, detail(request.params.ref), async (trx, session, caller) => {
        // The API's sandboxOnly rule: simulations exist in test mode only.
        if (session.environment !== 'test') throw new ApiError('SANDBOX_ONLY');
        const { outcome } = request.body;
        if (outcome === 'expire') await intents.simulateExpiry(trx, caller, request.params.ref);
        else {
          const amount = amountField(request.body.amount, true, langOf(request));
          const simulated = await intents.simulatePayment(
            trx,
            caller,
            request.params.ref,
            { outcome, ...(amount !== undefined ? { amount } : {}) },
            config.intentMaxAmount,
          );
          // A refusal whose attempt is kept (a locked sandbox wallet): committed, and shown as any refusal.
          if (simulated instanceof CommittedRefusal) {
            return { redirect: detail(request.params.ref), refusal: simulated.error };
          }
        }
        return { redirect: detail(request.params.ref) };
      }),
  );
};
