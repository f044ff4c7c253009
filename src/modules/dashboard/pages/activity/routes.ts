import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { literalUnion } from '../../../../http/schemas.js';
import type { Lang } from '../../../../lib/i18n.js';
import { AUDIT_ACTIONS } from '../../../audit/actions.js';
import { auditActors, listAuditEntries, type AuditRow } from '../../../audit/store.js';
import { at, DASHBOARD, langOf, requireSession, sendPage } from '../../context.js';
import { wordsFor, type Dictionary } from '../../i18n.js';
import type { ActivityRow } from './view.js';
import { ACTION_WORDS } from './words.js';
import { pageQuery } from '../../page-query.js';

const ACTIVITY = `${DASHBOARD}/activity`;
const PAGE_SIZE = 20;

const ListQuery = pageQuery({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  action: Type.Optional(literalUnion(['', ...AUDIT_ACTIONS])),
  actor: Type.Optional(Type.String({ maxLength: 64 })),
});

/** Where the dashboard shows what an act was done to, by the target's kind; a kind without a page has none. */
const TARGET_PAGES: Readonly<Record<string, (id: string) => string>> = {
  payment_intent: (id) => `${DASHBOARD}/payments/${encodeURIComponent(id)}`,
  order: (id) => `${DASHBOARD}/orders/${encodeURIComponent(id)}`,
  payout: (id) => `${DASHBOARD}/payouts/${encodeURIComponent(id)}`,
  payout_batch: (id) => `${DASHBOARD}/payouts?batch=${encodeURIComponent(id)}`,
  seller: (id) => `${DASHBOARD}/sellers/${encodeURIComponent(id)}`,
  payment_link: (id) => `${DASHBOARD}/links/${encodeURIComponent(id)}`,
  webhook_endpoint: (id) => `${DASHBOARD}/developers/webhooks/${encodeURIComponent(id)}`,
  api_key: () => `${DASHBOARD}/developers/keys`,
  business: () => `${DASHBOARD}/settings`,
};

type Words = Dictionary<'activity'>;

/** Who did an act, as a member of the team reads it: an email, a key by its hint, the operator, the platform. */
function actorWords(
  t: Words,
  actor: { kind: AuditRow['actor_kind']; id: string | null; label: string | null },
): string {
  switch (actor.kind) {
    case 'user':
      return actor.label ?? actor.id ?? '';
    case 'api_key':
      return t.activityKey.replace('{hint}', actor.label ?? actor.id ?? '');
    case 'operator':
      return t.activityOperator;
    case 'system':
      return actor.label ? `${t.activitySystem} (${actor.label})` : t.activitySystem;
  }
}

function rowOf(t: Words, lang: Lang, row: AuditRow): ActivityRow {
  const action = row.action as ActivityRow['action'];
  const page = row.target_kind === null ? undefined : TARGET_PAGES[row.target_kind];
  return {
    id: row.id,
    createdAt: row.created_at.toISOString(),
    action,
    what: ACTION_WORDS[action]?.[lang] ?? row.action,
    who: actorWords(t, { kind: row.actor_kind, id: row.actor_id, label: row.actor_label }),
    ip: row.ip,
    target:
      row.target_kind !== null && row.target_id !== null
        ? { kind: row.target_kind, id: row.target_id, href: page ? page(row.target_id) : null }
        : null,
  };
}

/**
 * The Activity page (issue 53 item 4, decision 085): the business's audit log as its team reads
 * it, newest first, the session's mode and the acts of no mode, 20 a page, filtered by act and by
 * member. Only those who hold `activity.read` (owners and admins) see it.
 */
export const activityPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;

  app.get(
    at(ACTIVITY),
    { config: { dashboard: 'activity.read' }, schema: { hide: true, querystring: ListQuery } },
    async (request, reply) => {
      const session = requireSession(request);
      const lang = langOf(request);
      const t = wordsFor('activity', lang);
      const page = request.query.page ?? 1;
      const action = request.query.action || undefined;
      const actor = request.query.actor || undefined;
      const [result, actors] = await Promise.all([
        listAuditEntries(
          db,
          { businessId: session.businessId, environment: session.environment, action, actor },
          { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE },
        ),
        auditActors(db, session.businessId),
      ]);
      const filters = { action: action ?? '', actor: actor ?? '' };
      return sendPage(request, reply, 'activity', {
        rows: result.items.map((row) => rowOf(t, lang, row)),
        actions: AUDIT_ACTIONS.map((value) => ({ value, words: ACTION_WORDS[value][lang] })),
        members: actors
          .map((member) => ({
            value: member.kind === 'operator' || member.kind === 'system' ? member.kind : (member.id ?? ''),
            words: actorWords(t, member),
          }))
          .filter(
            (member, index, all) => member.value !== '' && all.findIndex((m) => m.value === member.value) === index,
          ),
        filters,
        filterQuery: new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== '')).toString(),
        total: result.total,
        page,
        pages: Math.max(1, Math.ceil(result.total / PAGE_SIZE)),
      });
    },
  );
};
