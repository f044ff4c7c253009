import formbody from '@fastify/formbody';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { sameToken } from '../../http/auth.js';
import { toApiError } from '../../http/error-handler.js';
import { ApiError } from '../../http/errors.js';
import { keyedWrite, WALLET_FORM_WRITE, WALLET_SIGN_IN_WRITE } from '../../http/idempotency/plugin.js';
import { sendCustomerPage } from '../../http/views.js';
import { keepLang, negotiateLang, type Lang } from '../../lib/i18n.js';
import { walletPhone } from '../../lib/phone.js';
import { customerLimits } from '../checkout/limits.js';
import { cookiesOf, newToken, setCookie } from '../dashboard/cookies.js';
import { answerRequest, setMuted } from '../requests/service.js';
import { authenticateWallet, findWallet, walletView } from '../wallets/service.js';
import { walletEvents } from './events.js';
import { noticeOf, walletFormWrite, type FormAnswer, type KeptNotice } from './forms.js';
import { walletInstallRoutes } from './install.js';
import type { WalletText } from './i18n.js';
import { homePage, notice, signInPage, WALLET, walletAssets, type Notice, type PageContext } from './pages.js';
import { clearCookie, sessionOf, setSessionCookie, walletCookieNames } from './session-plugin.js';
import { createWalletSession, revokeWalletSession, type WalletSession } from './sessions.js';
import { parseCursor, walletHistory, type HistoryCursor } from './history.js';
import { merchantName, mutedMerchants, pendingRequests } from './store.js';

const FORM_BYTES = 16 * 1024;
const PIN = /^[0-9]{4,6}$/;
// Pages and forms take any query and any fields: a bad one is answered with the page, never a JSON error.
const PageQuery = Type.Object({
  lang: Type.Optional(Type.String()),
  mode: Type.Optional(Type.String()),
  /** Where an older page of the history starts (its "older" link); a bad one draws the newest. */
  before: Type.Optional(Type.String()),
});
const Form = Type.Record(Type.String(), Type.Unknown());
/** Plain HTML forms: the only body these routes read (requireDeclaredMediaTypes refuses others). */
const FORM_TYPES = ['application/x-www-form-urlencoded'];
const RequestParams = Type.Object({ id: Type.String() });
const MerchantParams = Type.Object({ businessId: Type.String() });

/** The page's text for each error code a wallet form may meet; the API's English message is never shown. */
const ERROR_TEXTS: Partial<Record<string, WalletText>> = {
  INVALID_PIN: 'errPhonePin',
  WALLET_NOT_FOUND: 'errPhonePin',
  WALLET_LOCKED: 'errLocked',
  RATE_LIMITED: 'rateLimited',
  PAYMENT_REQUEST_NOT_PENDING: 'expired',
  PAYMENT_REQUEST_NOT_FOUND: 'notFound',
  // A form without its `_idem` token, or whose token came back with other fields: drawn afresh.
  VALIDATION_ERROR: 'formExpired',
  IDEMPOTENCY_KEY_REUSED: 'formExpired',
  IDEMPOTENCY_KEY_IN_PROGRESS: 'somethingWrong',
};

function errorNotice(lang: Lang, error: ApiError): Notice {
  return notice(lang, 'error', ERROR_TEXTS[error.code] ?? 'somethingWrong');
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * The wallet app at /wallet: a payer signs in with their wallet phone and PIN (in the sandbox with
 * `?mode=test`), sees their balance, answers the payment requests merchants send them (approve
 * with the PIN again, or decline), mutes a merchant, and reads their history. Server-drawn pages
 * whose plain forms work without a script; the script counts down and listens to /wallet/events.
 */
export const walletAppRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, rateLimiter, config } = app.services;
  const names = walletCookieNames(config.publicUrl);
  const limits = customerLimits(rateLimiter);

  await app.register(formbody, { bodyLimit: FORM_BYTES });
  await app.register(walletAssets.routes);
  await app.register(walletEvents(names));
  await app.register(walletInstallRoutes);

  const contextOf = (request: FastifyRequest): PageContext => {
    const query = (request.query ?? {}) as { lang?: unknown };
    return { choice: negotiateLang(query.lang, request.headers['accept-language']), path: request.url };
  };
  const home = (context: PageContext) => keepLang(WALLET, context.choice);

  /** The sign-in form, with a fresh token in its cookie and hidden field (a form posted from elsewhere has neither). */
  const renderSignIn = (
    reply: FastifyReply,
    context: PageContext,
    status: number,
    form: { sandbox: boolean; phone?: string; notice?: Notice },
  ) => {
    const loginToken = newToken();
    // A browser-session cookie: the sign-in form's token lives only as long as the page may be open.
    setCookie(reply, names, names.login, loginToken);
    return sendCustomerPage(reply, signInPage(context, status, { ...form, loginToken }));
  };

  const renderHome = async (
    reply: FastifyReply,
    context: PageContext,
    session: WalletSession,
    status = 200,
    pageNotice?: Notice,
    /** An older page of the history (GET only: a form's answer shows the newest). */
    before?: HistoryCursor,
  ) => {
    const owner = { walletId: session.walletId, phone: session.phone, environment: session.environment };
    const wallet = await findWallet(db, session.environment, session.phone);
    const [view, pending, muted, history] = await Promise.all([
      wallet ? walletView(db, wallet) : Promise.resolve({ balance: 0 }),
      pendingRequests(db, owner),
      mutedMerchants(db, owner),
      walletHistory(db, owner, before),
    ]);
    return sendCustomerPage(
      reply,
      homePage(context, status, {
        csrfToken: session.csrfToken,
        phone: session.phone,
        sandbox: session.environment === 'test',
        balance: view.balance,
        pending,
        muted,
        history,
        olderPage: before !== undefined,
        notice: pageNotice,
        now: new Date(),
      }),
    );
  };

  app.get(WALLET, { schema: { hide: true, querystring: PageQuery } }, async (request, reply) => {
    const context = contextOf(request);
    const session = await sessionOf(db, names, request, reply);
    if (session) return renderHome(reply, context, session, 200, undefined, parseCursor(request.query.before));
    return renderSignIn(reply, context, 200, { sandbox: request.query.mode === 'test' });
  });

  app.post(
    `${WALLET}/sign-in`,
    { config: { write: WALLET_SIGN_IN_WRITE }, schema: { hide: true, consumes: FORM_TYPES, body: Form } },
    async (request, reply) => {
      const context = contextOf(request);
      const { lang } = context.choice;
      const body = request.body;
      const sandbox = body.mode === 'test';
      const environment = sandbox ? 'test' : 'live';
      const typed = textOf(body.phone);
      const refuse = (status: number, key: WalletText) =>
        renderSignIn(reply, context, status, { sandbox, phone: typed, notice: notice(lang, 'error', key) });
      if (!sameToken(body._csrf, cookiesOf(request)[names.login])) return refuse(403, 'formExpired');
      if (!(await limits.pageAllowed(request, reply))) return refuse(429, 'rateLimited');
      const phone = walletPhone(typed);
      if (!phone) return refuse(400, 'errPhoneInvalid');
      const pin = textOf(body.pin);
      if (!PIN.test(pin)) return refuse(400, 'errPinInvalid');
      try {
        await limits.byWallet(reply, phone);
        const wallet = await authenticateWallet(db, environment, phone, pin);
        const signIn = keyedWrite(request, undefined);
        const opened = await signIn.run(async (trx) => ({
          value: await createWalletSession(trx, wallet.id),
          stored: { status: 303, body: '' },
        }));
        if (opened.kind !== 'done') throw new Error('a sign-in has no key to replay');
        const token = opened.value;
        setSessionCookie(reply, names, token);
        clearCookie(reply, names, names.login);
        return reply.redirect(home(context), 303);
      } catch (error) {
        if (!(error instanceof ApiError) || !ERROR_TEXTS[error.code]) throw error;
        return renderSignIn(reply, context, error.status, { sandbox, phone: typed, notice: errorNotice(lang, error) });
      }
    },
  );

  /**
   * A signed-in form: the session, then its CSRF token, before anything is read. No session: back
   * to the sign-in page; a forged or stale form: the page again, saying so, nothing done.
   */
  const signedForm = async (
    request: FastifyRequest,
    reply: FastifyReply,
    work: (session: WalletSession, context: PageContext, body: Record<string, unknown>) => Promise<FastifyReply>,
  ) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const context = contextOf(request);
    const session = await sessionOf(db, names, request, reply);
    if (!session) {
      return renderSignIn(reply, context, 401, {
        sandbox: false,
        notice: notice(context.choice.lang, 'error', 'sessionEnded'),
      });
    }
    if (!sameToken(body._csrf, session.csrfToken)) {
      return renderHome(reply, context, session, 403, notice(context.choice.lang, 'error', 'formExpired'));
    }
    try {
      return await work(session, context, body);
    } catch (error) {
      if (!(error instanceof ApiError) || !ERROR_TEXTS[error.code]) throw error;
      return renderHome(reply, context, session, error.status, errorNotice(context.choice.lang, error));
    }
  };

  /** The home page after a form's write, with its answer (the first one's, on a repeat of the form). */
  const answered = (
    reply: FastifyReply,
    context: PageContext,
    session: WalletSession,
    written: { answer: FormAnswer; replayed: boolean },
  ) => {
    if (written.replayed) reply.header('Idempotent-Replayed', 'true');
    const { answer } = written;
    if (answer.kind === 'home') return reply.redirect(home(context), 303);
    return renderHome(reply, context, session, answer.status, noticeOf(context.choice.lang, answer.notice));
  };
  const said = (kept: KeptNotice): FormAnswer => ({ kind: 'notice', status: 200, notice: kept });
  const formSchema = { hide: true, consumes: FORM_TYPES, body: Form };

  app.post(`${WALLET}/sign-out`, { config: { write: WALLET_FORM_WRITE }, schema: formSchema }, async (request, reply) =>
    signedForm(request, reply, async (session, context) => {
      const written = await walletFormWrite(request, session).run(async (trx) => {
        await revokeWalletSession(trx, session.tokenHash);
        return { kind: 'home' };
      });
      clearCookie(reply, names, names.session);
      return answered(reply, context, session, written);
    }),
  );

  const answer =
    (kind: 'APPROVED' | 'DECLINED') =>
    async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) =>
      signedForm(request, reply, async (session, context, body) => {
        const { lang } = context.choice;
        const wallet = { phone: session.phone, environment: session.environment };
        // The form's key first: a form without its token costs no PIN attempt.
        const form = walletFormWrite(request, session);
        if (kind === 'APPROVED') {
          const pin = textOf(body.pin);
          if (!PIN.test(pin)) return renderHome(reply, context, session, 400, notice(lang, 'error', 'errPinInvalid'));
          await limits.byWallet(reply, session.phone);
          // The PIN first, outside the transaction: its hash is slow, and a wrong one locks nothing.
          await authenticateWallet(db, session.environment, session.phone, pin);
        }
        const id = request.params.id.slice(0, 64);
        const written = await form.run(async (trx) => {
          const ended = await answerRequest(trx, wallet, id, kind);
          const amount = Number(ended.amount);
          if (ended.status === 'APPROVED') {
            const merchant = (await merchantName(trx, ended.business_id, session.environment)) ?? '';
            return said({ kind: 'ok', text: 'approved', merchant, amount });
          }
          if (ended.status === 'DECLINED') return said({ kind: 'ok', text: 'declined' });
          const text = ended.failure_code === 'INSUFFICIENT_BALANCE' ? 'failedBalance' : 'failed';
          return said({ kind: 'error', text, amount });
        });
        return answered(reply, context, session, written);
      });

  const answerSchema = {
    config: { write: WALLET_FORM_WRITE },
    schema: { ...formSchema, params: RequestParams },
  };
  app.post(`${WALLET}/requests/:id/approve`, answerSchema, answer('APPROVED'));
  app.post(`${WALLET}/requests/:id/decline`, answerSchema, answer('DECLINED'));

  const mute =
    (muted: boolean) => async (request: FastifyRequest<{ Params: { businessId: string } }>, reply: FastifyReply) =>
      signedForm(request, reply, async (session, context) => {
        const { businessId } = request.params;
        const written = await walletFormWrite(request, session).run(async (trx) => {
          const name = businessId.length <= 64 ? await merchantName(trx, businessId, session.environment) : undefined;
          if (name === undefined) throw new ApiError('PAYMENT_REQUEST_NOT_FOUND');
          await setMuted(trx, { phone: session.phone, environment: session.environment }, businessId, muted);
          return said({ kind: 'ok', text: muted ? 'muted' : 'unmuted', merchant: name });
        });
        return answered(reply, context, session, written);
      });

  const muteSchema = { config: { write: WALLET_FORM_WRITE }, schema: { ...formSchema, params: MerchantParams } };
  app.post(`${WALLET}/merchants/:businessId/mute`, muteSchema, mute(true));
  app.post(`${WALLET}/merchants/:businessId/unmute`, muteSchema, mute(false));

  // Anything unexpected: the sign-in page, in the reader's language, saying something went wrong.
  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error as Error, request);
    const context = contextOf(request);
    const key: WalletText =
      apiError.status >= 500 ? 'somethingWrong' : (ERROR_TEXTS[apiError.code] ?? 'somethingWrong');
    request.log.error({ err: error }, 'wallet app error');
    return renderSignIn(reply, context, apiError.status, {
      sandbox: false,
      notice: notice(context.choice.lang, 'error', key),
    });
  });
};
