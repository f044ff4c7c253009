import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { canonicalJson, inIdempotentTransaction, type IdempotentOutcome } from '../../http/idempotency.js';
import { callerOf, requireSession, sendPage } from './context.js';
import type { DashboardSession } from './sessions.js';

/** What a dashboard write ends in: a page to go to, or (secrets shown once) a page drawn now. */
export interface WriteResult {
  /** Where the browser goes next; also what a repeated submit of the same form is sent to. */
  redirect: string;
  /** Drawn instead of redirecting, the first time only (a new key's text is never stored). */
  page?: { template: string; data: Record<string, unknown> };
  /** Runs once the change is committed (cache invalidation); never on a repeat. */
  afterCommit?: () => Promise<void>;
}

const TOKEN = /^[A-Za-z0-9]{16,64}$/;
/** How long a repeated submit waits for the first one to finish before it gives up. */
const IN_PROGRESS_WAIT_MS = 5_000;

function withQuery(path: string, name: string, value: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value)}`;
}

/** What the form's key covers: its fields but the CSRF token and the route's secrets (a password). */
function formFields(request: FastifyRequest): Record<string, unknown> {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const { _csrf: _token, ...fields } = body;
  for (const name of request.routeOptions.config.secretFields ?? []) delete fields[name];
  // An uploaded file (a multipart form) counts by its bytes' digest: a double submit of one upload is one change.
  for (const [name, value] of Object.entries(fields)) {
    if (Buffer.isBuffer(value)) fields[name] = `sha256:${createHash('sha256').update(value).digest('hex')}`;
  }
  return fields;
}

/**
 * The dashboard's side of the one write path: the form's hidden `_idem` token is its idempotency
 * key (scoped to the business, the mode and the user), claimed in the same transaction as the
 * service's change, so a double click changes things once; the repeat is sent where the first
 * went. A refusal below 500 rolls back and sends the browser back to `back` with the error's code.
 */
export async function dashboardWrite(
  request: FastifyRequest,
  reply: FastifyReply,
  back: string,
  work: (trx: Transaction<DB>, session: DashboardSession, caller: ReturnType<typeof callerOf>) => Promise<WriteResult>,
): Promise<FastifyReply> {
  const session = requireSession(request);
  const fields = formFields(request);
  const token = fields._idem;
  if (typeof token !== 'string' || !TOKEN.test(token)) {
    throw new ApiError('VALIDATION_ERROR', 'The form is incomplete: reload the page and try again.', [
      { field: 'body._idem', message: 'is required' },
    ]);
  }
  const fingerprint = createHash('sha256')
    .update(`${request.method} ${request.url.split('?')[0]}\n${canonicalJson(fields)}`)
    .digest('hex');
  const idempotency = {
    businessId: session.businessId,
    environment: session.environment,
    key: `dashboard:${session.userId}:${token}`,
    fingerprint,
  };
  const deadline = Date.now() + IN_PROGRESS_WAIT_MS;
  let outcome: IdempotentOutcome<WriteResult>;
  for (;;) {
    try {
      outcome = await inIdempotentTransaction(request.server.services.db, idempotency, async (trx) => {
        const result = await work(trx, session, callerOf(session));
        return { value: result, stored: { status: 303, body: JSON.stringify({ location: result.redirect }) } };
      });
      break;
    } catch (error) {
      if (error instanceof ApiError && error.code === 'IDEMPOTENCY_KEY_IN_PROGRESS' && Date.now() < deadline) {
        // The first submit of this form is still running: answer as it will, once it is done.
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      if (error instanceof ApiError && error.status < 500)
        return reply.redirect(withQuery(back, 'error', error.code), 303);
      throw error;
    }
  }
  if (outcome.kind === 'replay') {
    const { location } = JSON.parse(outcome.body) as { location: string };
    return reply.redirect(withQuery(location, 'notice', 'already'), 303);
  }
  const result = outcome.value;
  await result.afterCommit?.();
  if (result.page) return sendPage(request, reply, result.page.template, result.page.data);
  return reply.redirect(withQuery(result.redirect, 'notice', 'done'), 303);
}
