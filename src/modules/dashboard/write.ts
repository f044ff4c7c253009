import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { keyedWrite } from '../../http/idempotency/plugin.js';
import { Type } from 'typebox';
import { callerOf, drawPage, requireSession } from './context.js';
import type { DrawnPage } from './page-views.js';
import type { DashboardSession } from './sessions.js';

/** The fields every dashboard form posts beside its own: the CSRF token and the idempotency key. */
export const Token = {
  _csrf: Type.Optional(Type.String({ maxLength: 200 })),
  _idem: Type.Optional(Type.String({ maxLength: 64 })),
};

/** The query a write's redirect leaves for the page it lands on: what happened, or what failed. */
export const Flash = {
  notice: Type.Optional(Type.String({ maxLength: 20 })),
  error: Type.Optional(Type.String({ maxLength: 64 })),
};

/** What a dashboard write ends in: a page to go to, or (secrets shown once) a page drawn now. */
export interface WriteResult {
  /** Where the browser goes next; also what a repeated submit of the same form is sent to. */
  redirect: string;
  /** Drawn instead of redirecting, the first time only (a new key's text is never stored). */
  page?: DrawnPage;
  /** Runs once the change is committed (cache invalidation); never on a repeat. */
  afterCommit?: () => Promise<void>;
  /** A refusal whose attempt is kept (committed), shown as a refusal rather than "done". */
  refusal?: ApiError;
}

/** `path` with one more query parameter, put before its fragment (`/settings?notice=done#live-access`). */
function withQuery(path: string, name: string, value: string): string {
  const hash = path.indexOf('#');
  const [base, fragment] = hash === -1 ? [path, ''] : [path.slice(0, hash), path.slice(hash)];
  return `${base}${base.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value)}${fragment}`;
}

/**
 * How a dashboard form's write answers the browser. The write itself is the one write path's
 * (`config.write: FORM_WRITE`: the form's `_idem` token is the key, in the business and mode's
 * scope, for the signed-in user); the stored answer is the redirect, and a repeat is sent where
 * the first went. A refusal below 500 rolls back and sends the browser back to `back` with the
 * error's code, or draws the form again (`redraw`).
 */
export async function dashboardWrite(
  request: FastifyRequest,
  reply: FastifyReply,
  back: string,
  work: (trx: Transaction<DB>, session: DashboardSession, caller: ReturnType<typeof callerOf>) => Promise<WriteResult>,
  /**
   * Draws the form again, with what was typed and the refusal on the field it is about, instead
   * of sending the browser back to `back` with the error's code (unless it answers undefined: a
   * refusal about no field of the form, such as a product deleted meanwhile).
   */
  redraw?: (error: ApiError) => Promise<FastifyReply> | undefined,
  /** The write's key when the route derives it from the form's content (KeyScope.token), not `_idem`. */
  keyToken?: string,
): Promise<FastifyReply> {
  const session = requireSession(request);
  const keyed = keyedWrite(request, {
    businessId: session.businessId,
    environment: session.environment,
    who: session.userId,
    ...(keyToken !== undefined ? { token: keyToken } : {}),
  });
  let outcome;
  try {
    outcome = await keyed.run(async (trx) => {
      const result = await work(trx, session, callerOf(session));
      return { value: result, stored: { status: 303, body: JSON.stringify({ location: result.redirect }) } };
    });
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) {
      const drawn = redraw?.(error);
      if (drawn) return drawn;
      return reply.redirect(withQuery(back, 'error', error.code), 303);
    }
    throw error;
  }
  if (outcome.kind === 'replay') {
    const { location } = JSON.parse(outcome.body) as { location: string };
    return reply.redirect(withQuery(location, 'notice', 'already'), 303);
  }
  const result = outcome.value;
  await result.afterCommit?.();
  if (result.page) return drawPage(request, reply, result.page);
  if (result.refusal) return reply.redirect(withQuery(result.redirect, 'error', result.refusal.code), 303);
  return reply.redirect(withQuery(result.redirect, 'notice', 'done'), 303);
}
