import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../../../http/errors.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { literalUnion } from '../../../../http/schemas.js';
import { fillText } from '../../../../lib/i18n.js';
import { balanceTransactionViewIn } from '../../../payments/balance-transactions.js';
import { MAX_BATCH_ITEMS } from '../../../payouts/schemas.js';
import { payoutQuote } from '../../../payouts/quote.js';
import * as payouts from '../../../payouts/service.js';
import { PAYOUT_STATUSES, payoutMachine } from '../../../payouts/state.js';
import { balanceTypeLabels } from '../../../payments/balance-type-labels.js';
import { batchView, payoutView } from '../../../payouts/views.js';
import { at, callerOf, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { errorText, type Dictionary } from '../../i18n.js';
import {
  MAX_DESCRIPTION,
  mruText,
  openBatch,
  readBatchCsv,
  readPayoutForm,
  sealBatch,
  sealKey,
  type BatchOwner,
  type PayoutField,
  type Problem,
} from './input.js';
import type { DashboardSession } from '../../sessions.js';
import { recordPayout, recordPayoutBatch } from '../../../audit/acts.js';
import { dashboardWrite, Token, Flash } from '../../write.js';
import {
  FIELD_WORDS,
  fileText,
  lineText,
  payoutWords,
  PROBLEM_WORDS,
  refusal,
  shortOfFunds,
  wordsOf,
} from './words.js';
import type { BatchReport } from './view.js';
import { pageQuery } from '../../page-query.js';

const PAYOUTS = `${DASHBOARD}/payouts`;
const BATCH = `${PAYOUTS}/batch`;
const PAGE_SIZE = 20;
/** A batch of MAX_BATCH_ITEMS lines with long descriptions stays far below this. */
const MAX_CSV_BYTES = 1024 * 1024;
/** The confirm form's sealed batch: base64 of at most MAX_BATCH_ITEMS compact items. */
const MAX_SEALED_CHARS = 1024 * 1024;

const Page = { page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })) };
const BatchId = Type.String({ pattern: '^pob_[0-9A-Za-z]{1,40}$' });
const ListQuery = pageQuery({
  ...Flash,
  ...Page,
  status: Type.Optional(literalUnion(['', ...PAYOUT_STATUSES])),
  batch: Type.Optional(BatchId),
});
const DetailQuery = pageQuery({ ...Flash, ...Page });
const FlashQuery = pageQuery(Flash);
const RefParams = Type.Object({ ref: Type.String({ minLength: 1, maxLength: 64 }) });
// Loose lengths on purpose: a value the payout refuses is shown back on the form with why.
const FormFields = {
  amount: Type.String({ maxLength: 40 }),
  phone: Type.String({ maxLength: 40 }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
};
const PayoutForm = Type.Object({ ...Token, ...FormFields }, { additionalProperties: false });
/**
 * The form takes no values from its URL: a link must not fill in a payout (an attacker's phone, an
 * amount) for an owner to confirm. Values come back only in answers to this session's own POSTs:
 * the review's Change button, or a refused confirm drawing the form again (decision 072).
 */
const NewQuery = pageQuery(Flash);
const TokenForm = Type.Object(Token, { additionalProperties: false });
const BatchConfirmForm = Type.Object(
  { ...Token, batch: Type.String({ maxLength: MAX_SEALED_CHARS }), signature: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);

/** The dashboard's form limits (plugin.ts), raised for one file, cut one byte past the cap to name it. */
const csvUpload = {
  dashboard: 'payouts.create',
  multipartOptions: {
    limits: { fields: 20, fieldSize: 64 * 1024, parts: 21, files: 1, fileSize: MAX_CSV_BYTES + 1 },
    throwFileSizeLimit: false,
  },
} as const;
/**
 * The batch's confirm form is multipart too: its sealed batch is larger than a urlencoded form may
 * be. Its key is its seal (`sealKey`), so `_idem` is left out of what the key covers.
 */
const sealedBatchForm = {
  dashboard: 'payouts.create',
  write: { ...FORM_WRITE, secretFields: [...FORM_WRITE.secretFields, '_idem'] },
  multipartOptions: { limits: { fields: 10, fieldSize: MAX_SEALED_CHARS, parts: 10, files: 0 } },
} as const;

// The single payout's form.

interface FormValues {
  amount: string;
  phone: string;
  description: string;
}

function formValues(source: { amount?: string; phone?: string; description?: string | undefined }): FormValues {
  return { amount: source.amount ?? '', phone: source.phone ?? '', description: source.description ?? '' };
}

/** The new-payout form with the values as typed, each refused field saying why, and a summary. */
function drawForm(
  request: FastifyRequest,
  reply: FastifyReply,
  values: FormValues,
  problems: Partial<Record<PayoutField, Problem>> = {},
  status = 200,
  error?: string,
): Promise<FastifyReply> {
  const { t, mru } = wordsOf(request);
  const maxAmount = mru(request.server.services.config.intentMaxAmount);
  const texts: Partial<Record<PayoutField, string>> = {};
  for (const [field, problem] of Object.entries(problems) as [PayoutField, Problem][]) {
    texts[field] = fillText(t[PROBLEM_WORDS[problem]], {
      max: problem === 'description' ? String(MAX_DESCRIPTION) : maxAmount,
    });
  }
  const named = (Object.keys(texts) as PayoutField[]).map((field) => t[FIELD_WORDS[field]]);
  const summary = named.length > 0 ? fillText(t.fixFields, { fields: named.join(', ') }) : error;
  return sendPage(
    request,
    reply,
    'payout-new',
    { values, problems: texts, ...(summary ? { error: summary } : {}) },
    status,
  );
}

// The batch.

function batchOwner(session: DashboardSession): BatchOwner {
  return { secret: session.tokenHash, businessId: session.businessId, environment: session.environment };
}

function drawBatch(
  request: FastifyRequest,
  reply: FastifyReply,
  data: { report?: BatchReport; error?: string },
  status = 200,
): Promise<FastifyReply> {
  return sendPage(request, reply, 'payout-batch', { maxLines: MAX_BATCH_ITEMS, report: null, ...data }, status);
}

/** The uploaded file, or the words for why there is none to read. */
function uploadedCsv(request: FastifyRequest, t: Dictionary<'payouts'>): Buffer | string {
  const file = (request.body as Record<string, unknown> | undefined)?.file;
  if (!Buffer.isBuffer(file) || file.length === 0) return t.batchFileMissing;
  if (file.length > MAX_CSV_BYTES) return t.batchFileTooLarge;
  return file;
}

const detail = (reference: string) => `${PAYOUTS}/${encodeURIComponent(reference)}`;

/**
 * The Payouts pages (issue 35): the list of the session mode's payouts, a payout sent in two
 * steps (the form, then a review of its fee and the balance it leaves), a batch from a CSV file
 * (a dry run naming every bad line, then a confirmation), and a payout's page with the balance
 * transactions it settles and its cancellation. Every change goes through payouts/service.ts.
 */
export const payoutPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;
  const limits = { maxAmount: config.intentMaxAmount, maxPendingSandbox: config.sandboxPendingPayoutsMax };
  const create = { dashboard: 'payouts.create', write: FORM_WRITE } as const;

  app.get(
    at(PAYOUTS),
    { config: { dashboard: 'balance.read' }, schema: { hide: true, querystring: ListQuery } },
    async (request, reply) => {
      const caller = callerOf(requireSession(request));
      const { status, batch } = request.query;
      const page = request.query.page ?? 1;
      const [result, found] = await Promise.all([
        payouts.listPayouts(db, caller, {
          status: status || undefined,
          batch,
          limit: PAGE_SIZE,
          offset: (page - 1) * PAGE_SIZE,
        }),
        batch ? payouts.getPayoutBatch(db, caller, batch) : undefined,
      ]);
      const filters = new URLSearchParams();
      if (status) filters.set('status', status);
      if (batch) filters.set('batch', batch);
      return sendPage(request, reply, 'payouts', {
        statuses: PAYOUT_STATUSES,
        words: payoutWords(wordsOf(request).t),
        filters: { status: status ?? '', batch: batch ?? '' },
        filterQuery: filters.toString(),
        batch: found ? batchView(found.batch, found.counts) : null,
        items: result.items.map(payoutView),
        total: result.total,
        page,
        pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
      });
    },
  );

  app.get(
    at(`${PAYOUTS}/new`),
    { config: { dashboard: 'payouts.create' }, schema: { hide: true, querystring: NewQuery } },
    async (request, reply) => {
      return drawForm(request, reply, formValues({}), {}, 200, refusal(wordsOf(request).t, request.query.error).error);
    },
  );

  // The review's Change button: the form again with the reviewed values, posted by this session.
  app.post(
    at(`${PAYOUTS}/new`),
    { config: { dashboard: 'payouts.create' }, schema: { hide: true, body: PayoutForm } },
    async (request, reply) => drawForm(request, reply, formValues(request.body)),
  );

  // The review reads and previews only: no key, nothing written; the Confirm it draws is the write.
  app.post(
    at(`${PAYOUTS}/review`),
    { config: { dashboard: 'payouts.create' }, schema: { hide: true, body: PayoutForm } },
    async (request, reply) => {
      const values = formValues(request.body);
      const reading = readPayoutForm(values, limits.maxAmount, langOf(request));
      if ('problems' in reading) return drawForm(request, reply, values, reading.problems, 400);
      const money = await payoutQuote(db, callerOf(requireSession(request)), [reading.input.amount]);
      if (money.after < 0) return drawForm(request, reply, values, {}, 402, shortOfFunds(request, money));
      return sendPage(request, reply, 'payout-review', {
        payout: reading.input,
        amountText: mruText(reading.input.amount),
        money,
      });
    },
  );

  app.post(at(PAYOUTS), { config: create, schema: { hide: true, body: PayoutForm } }, async (request, reply) => {
    // Read again, never trusted from the review page: the same rules, the fee recomputed by the service.
    const values = formValues(request.body);
    const reading = readPayoutForm(values, limits.maxAmount, langOf(request));
    if ('problems' in reading) return drawForm(request, reply, values, reading.problems, 400);
    return dashboardWrite(
      request,
      reply,
      `${PAYOUTS}/new`,
      async (trx, _session, caller) => {
        const payout = await payouts.createPayout(trx, caller, reading.input, limits);
        await recordPayout(trx, request, 'payout.created', payout);
        return { redirect: detail(payout.reference) };
      },
      // Refused (the balance moved since the review): the form again with the values and why.
      (error) => {
        const { t } = wordsOf(request);
        const why = refusal(t, error.code).error ?? errorText(error.code, langOf(request));
        return drawForm(request, reply, values, {}, error.status, why);
      },
    );
  });

  app.get(
    at(BATCH),
    { config: { dashboard: 'payouts.create' }, schema: { hide: true, querystring: FlashQuery } },
    async (request, reply) => {
      const { t } = wordsOf(request);
      const error =
        request.query.error === 'VALIDATION_ERROR' ? t.batchSealBroken : refusal(t, request.query.error).error;
      return drawBatch(request, reply, error ? { error } : {});
    },
  );

  // The dry run: every line checked, the totals previewed, nothing written.
  app.post(at(`${BATCH}/review`), { config: csvUpload, schema: { hide: true } }, async (request, reply) => {
    const session = requireSession(request);
    const { t, mru } = wordsOf(request);
    const file = uploadedCsv(request, t);
    if (typeof file === 'string') return drawBatch(request, reply, { error: file }, 400);
    const reading = readBatchCsv(file, limits.maxAmount);
    if (reading.kind === 'file') return drawBatch(request, reply, { error: fileText(t, reading.problem) }, 400);
    const money = await payoutQuote(
      db,
      callerOf(session),
      reading.items.map((item) => item.amount),
    );
    const short = money.after < 0;
    const ready = reading.errors.length === 0 && !short;
    const maxAmount = mru(limits.maxAmount);
    return drawBatch(request, reply, {
      report: {
        lineCount: reading.lineCount,
        errors: reading.errors.map((error) => ({ line: error.line, text: lineText(t, error, maxAmount) })),
        money,
        sealed: ready ? sealBatch(reading.items, batchOwner(session)) : null,
      },
      ...(short ? { error: shortOfFunds(request, money) } : {}),
    });
  });

  app.post(
    at(BATCH),
    { config: sealedBatchForm, schema: { hide: true, body: BatchConfirmForm } },
    async (request, reply) =>
      dashboardWrite(
        request,
        reply,
        BATCH,
        async (trx, session, caller) => {
          // The items come back sealed; their totals and fees are computed again by the service.
          const items = openBatch(request.body, batchOwner(session), limits.maxAmount);
          if (!items)
            throw new ApiError(
              'VALIDATION_ERROR',
              'The checked batch does not match this session or is too old; check the file again.',
            );
          const created = await payouts.createPayoutBatch(trx, caller, items, limits);
          await recordPayoutBatch(trx, request, created.batch.id, created.payouts);
          return { redirect: `${PAYOUTS}?batch=${encodeURIComponent(created.batch.id)}` };
        },
        undefined,
        // A seal is confirmed once: a second confirm, with any `_idem`, goes to the batch made.
        sealKey(request.body),
      ),
  );

  app.get(
    at(`${PAYOUTS}/:ref`),
    { config: { dashboard: 'balance.read' }, schema: { hide: true, params: RefParams, querystring: DetailQuery } },
    async (request, reply) => {
      const caller = callerOf(requireSession(request));
      const page = request.query.page ?? 1;
      const result = await payouts.payoutTransactions(db, caller, request.params.ref, {
        limit: PAGE_SIZE,
        offset: (page - 1) * PAGE_SIZE,
      });
      const { t } = wordsOf(request);
      return sendPage(request, reply, 'payout', {
        payout: payoutView(result.payout),
        words: payoutWords(t),
        cancellable: payoutMachine.isAllowed(result.payout, 'cancel'),
        transactions: result.items.map((row) => balanceTransactionViewIn(row, langOf(request))),
        typeLabels: balanceTypeLabels[langOf(request)],
        total: result.total,
        page,
        pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
        ...refusal(t, request.query.error),
      });
    },
  );

  app.post(
    at(`${PAYOUTS}/:ref/cancel`),
    { config: create, schema: { hide: true, params: RefParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, detail(request.params.ref), async (trx, _session, caller) => {
        const payout = await payouts.cancelPayout(trx, caller, request.params.ref);
        await recordPayout(trx, request, 'payout.cancelled', payout);
        return { redirect: detail(request.params.ref) };
      }),
  );
};
