import type { FastifyRequest } from 'fastify';
import type { AuditActorKind, AuditDetails, Environment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { newId } from '../../lib/ids.js';
import { isModelessAction, type AuditAction } from './actions.js';

/**
 * The audit log's one write (issue 53 item 4, decision 083). An act records its entry with the
 * executor of its own transaction, so the entry commits with the act or not at all; nothing
 * updates or deletes an entry (migration 050's trigger refuses it).
 */

/** Who did an act, and from where. */
export interface AuditActor {
  kind: AuditActorKind;
  /** The user's id, the key's id, or null (the operator, a task). */
  id: string | null;
  /** The user's email, the key's hint, or what names a task. */
  label: string | null;
  ip: string | null;
  userAgent: string | null;
}

/** What an act was done to. */
export interface AuditTarget {
  kind: string;
  id: string;
}

export interface AuditEntry {
  businessId: string;
  /** The mode the act belongs to; null for an act of no mode (sign-in, team, settings). */
  environment: Environment | null;
  action: AuditAction;
  actor: AuditActor;
  target?: AuditTarget;
  details?: AuditDetails;
}

const USER_AGENT_MAX = 300;

function userAgentOf(request: FastifyRequest): string | null {
  const agent = request.headers['user-agent'];
  return typeof agent === 'string' && agent !== '' ? agent.slice(0, USER_AGENT_MAX) : null;
}

/**
 * The actor of a request: the dashboard user signed in, else the API key that authenticated it,
 * else the operator (the admin token). A request with none of them (a failed sign-in) passes its
 * own actor instead.
 */
export function actorOf(request: FastifyRequest): AuditActor {
  const from = { ip: request.ip, userAgent: userAgentOf(request) };
  if (request.dashboard) return { kind: 'user', id: request.dashboard.userId, label: request.dashboard.email, ...from };
  if (request.auth) return { kind: 'api_key', id: request.auth.keyId, label: request.auth.keyHint, ...from };
  if (request.operator) return { kind: 'operator', id: null, label: 'operator', ...from };
  throw new Error(`${request.method} ${request.routeOptions.url}: an audited act without a known actor`);
}

/** The actor of a request that no session or key proves (a failed sign-in: `label` is the email typed). */
export function anonymousActorOf(request: FastifyRequest, label: string | null): AuditActor {
  return { kind: 'user', id: null, label, ip: request.ip, userAgent: userAgentOf(request) };
}

/** The platform's own periodic tasks and the operator's CLI. */
export const SYSTEM_ACTOR = (label: string): AuditActor => ({
  kind: 'system',
  id: null,
  label,
  ip: null,
  userAgent: null,
});

export async function recordAudit(db: Executor, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      id: newId('aud'),
      business_id: entry.businessId,
      environment: entry.environment,
      action: entry.action,
      actor_kind: entry.actor.kind,
      actor_id: entry.actor.id,
      actor_label: entry.actor.label,
      ip: entry.actor.ip,
      user_agent: entry.actor.userAgent,
      target_kind: entry.target?.kind ?? null,
      target_id: entry.target?.id ?? null,
      details: JSON.stringify(entry.details ?? {}),
    })
    .execute();
}

/** What an act says of itself; who did it, for which business and in which mode come from its request. */
export interface AuditedAct {
  action: AuditAction;
  target?: AuditTarget;
  details?: AuditDetails;
  /** The business acted on, when the request does not carry one (the operator's routes). */
  businessId?: string;
}

/**
 * Records an act done by a request (a dashboard form, an API call, an operator's call) with the
 * executor of the act's transaction: the business and mode are the session's or the key's, and
 * the acts of no mode (`isModelessAction`) are recorded without one.
 */
export async function recordAct(db: Executor, request: FastifyRequest, act: AuditedAct): Promise<void> {
  const businessId = act.businessId ?? request.dashboard?.businessId ?? request.auth?.businessId;
  if (businessId === undefined) throw new Error(`${act.action}: an audited act without a business`);
  const environment = isModelessAction(act.action)
    ? null
    : (request.dashboard?.environment ?? request.auth?.environment ?? null);
  await recordAudit(db, {
    businessId,
    environment,
    action: act.action,
    actor: actorOf(request),
    ...(act.target ? { target: act.target } : {}),
    ...(act.details ? { details: act.details } : {}),
  });
}
