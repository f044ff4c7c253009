import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { startDownload } from '../../../../http/downloads.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { fillText, formatPageAmount } from '../../../../lib/i18n.js';
import { recordPayout } from '../../../audit/acts.js';
import { balanceStatement, monthPeriod, statementFile } from '../../../payments/statements.js';
import { payoutQuote } from '../../../payouts/quote.js';
import * as payouts from '../../../payouts/service.js';
import * as sellers from '../../../sellers/service.js';
import { sellerView } from '../../../sellers/views.js';
import { at, callerOf, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { errorText } from '../../i18n.js';
import { dashboardWrite, Token } from '../../write.js';
import { MAX_DESCRIPTION, mruText, readPayoutAmount } from '../payouts/input.js';
import { detail, drawSeller, SELLERS, wordsOf } from './page.js';
import type { PayOutForm } from './view.js';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
// Loose lengths on purpose: a value the payout refuses is shown back on the form with why.
const PayOutBody = Type.Object(
  {
    ...Token,
    amount: Type.String({ maxLength: 40 }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
// A month's file: `2026-11.csv` or `2026-11.html`.
const StatementParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  file: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}[.](csv|html)$' }),
});

type Reading = { amount: number; description: string } | { problems: PayOutForm['problems'] };

/** The form's amount and description, or each refused one's words. */
function readPayOut(
  request: FastifyRequest,
  body: { amount: string; description?: string | undefined },
  maxAmount: number,
): Reading {
  const { t, lang } = wordsOf(request);
  const amount = readPayoutAmount(body.amount, maxAmount, lang);
  const description = (body.description ?? '').trim();
  const problems: PayOutForm['problems'] = {};
  if (amount === 'amount') problems.amount = t.payOutAmountInvalid;
  if (amount === 'amountRange')
    problems.amount = fillText(t.payOutAmountRange, { max: formatPageAmount(maxAmount, lang) });
  if (description.length > MAX_DESCRIPTION) {
    problems.description = fillText(t.payOutDescriptionTooLong, { max: String(MAX_DESCRIPTION) });
  }
  return typeof amount === 'number' && Object.keys(problems).length === 0 ? { amount, description } : { problems };
}

const typed = (body: { amount: string; description?: string | undefined }) => ({
  amount: body.amount,
  description: body.description ?? '',
});

/**
 * A payout to a seller (decision 082) from its page, in two steps as the Payouts page's: the Pay
 * out form (an amount, to the seller's phone, from the seller's balance), then a review of its fee
 * and the balance it leaves, whose Confirm creates it through payouts/service.ts. And the seller's
 * monthly statements, the API's (payments/statements.ts) for the seller, as the Balance page's.
 */
export const sellerPayOutPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, database, config } = app.services;
  const limits = { maxAmount: config.intentMaxAmount, maxPendingSandbox: config.sandboxPendingPayoutsMax };

  /** The seller's page with the Pay out form as typed, and why it was refused. */
  function refusedPayOut(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    payOut: PayOutForm,
    status: number,
  ): Promise<FastifyReply> {
    const problems = Object.keys(payOut.problems).length;
    const error = payOut.error ?? (problems > 0 ? wordsOf(request).t.payOutFix : undefined);
    return drawSeller(database, request, reply, id, { payOut: { ...payOut, ...(error ? { error } : {}) }, status });
  }

  // The review reads and previews only: nothing written; the Confirm it draws is the write.
  app.post(
    at(`${SELLERS}/:id/payouts/review`),
    { config: { dashboard: 'payouts.create' }, schema: { hide: true, params: IdParams, body: PayOutBody } },
    async (request, reply) => {
      const { id } = request.params;
      const caller = callerOf(requireSession(request));
      const values = typed(request.body);
      const reading = readPayOut(request, request.body, limits.maxAmount);
      if ('problems' in reading) return refusedPayOut(request, reply, id, { values, problems: reading.problems }, 400);
      const seller = await sellers.getSeller(db, caller, id);
      const money = await payoutQuote(db, caller, [reading.amount], seller.id);
      if (money.after < 0) {
        const { t, lang } = wordsOf(request);
        const mru = (centimes: number) => formatPageAmount(centimes, lang);
        const error = fillText(t.payOutShort, { available: mru(money.available), needed: mru(money.total) });
        return refusedPayOut(request, reply, id, { values, problems: {}, error }, 402);
      }
      return sendPage(request, reply, 'seller-payout-review', {
        seller: sellerView(seller),
        amountText: mruText(reading.amount),
        description: reading.description,
        money,
      });
    },
  );

  app.post(
    at(`${SELLERS}/:id/payouts`),
    {
      config: { dashboard: 'payouts.create', write: FORM_WRITE },
      schema: { hide: true, params: IdParams, body: PayOutBody },
    },
    async (request, reply) => {
      const { id } = request.params;
      const values = typed(request.body);
      // Read again, never trusted from the review page: the same rules, the fee recomputed by the service.
      const reading = readPayOut(request, request.body, limits.maxAmount);
      if ('problems' in reading) return refusedPayOut(request, reply, id, { values, problems: reading.problems }, 400);
      return dashboardWrite(
        request,
        reply,
        detail(id),
        async (trx, _session, caller) => {
          const payout = await payouts.createPayout(
            trx,
            caller,
            {
              amount: reading.amount,
              seller: id,
              ...(reading.description ? { description: reading.description } : {}),
            },
            limits,
          );
          await recordPayout(trx, request, 'payout.created', payout);
          return { redirect: `${DASHBOARD}/payouts/${encodeURIComponent(payout.reference)}` };
        },
        // Refused (the balance moved since the review, too many waiting): the form again with why.
        (error) => {
          if (error.code === 'SELLER_NOT_FOUND' || error.code === 'SANDBOX_MISMATCH') return undefined;
          const { t } = wordsOf(request);
          const why = error.code === 'INSUFFICIENT_FUNDS' ? t.payOutShortLater : errorText(error.code, langOf(request));
          return refusedPayOut(request, reply, id, { values, problems: {}, error: why }, error.status);
        },
      );
    },
  );

  // The seller's statement of a month, labelled in the dashboard's language, with the API's download limits.
  app.get(
    at(`${SELLERS}/:id/statements/:file`),
    { config: { dashboard: 'balance.read' }, schema: { hide: true, params: StatementParams } },
    async (request, reply) => {
      const caller = callerOf(requireSession(request));
      const [month, format] = request.params.file.split('.') as [string, 'csv' | 'html'];
      // Read before the first byte is sent: an unknown seller or month is the dashboard's page.
      const seller = await sellers.getSeller(db, caller, request.params.id);
      const period = monthPeriod(month, 'month');
      const owner = { ...caller, seller: seller.id };
      const file = await startDownload(caller, reply.raw, config.downloads, async () =>
        statementFile(db, await balanceStatement(db, owner, period), format, langOf(request)),
      );
      return reply.headers(file.headers).send(file.body);
    },
  );
};
