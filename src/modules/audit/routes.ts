import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth } from '../../http/context.js';
import {
  DateFilter,
  Envelope,
  literalUnion,
  Paginated,
  pageOf,
  pageWindow,
  Pagination,
  parseDateRange,
} from '../../http/schemas.js';
import { AUDIT_ACTIONS } from './actions.js';
import { listAuditEntries } from './store.js';
import { AuditEntry, auditEntryView } from './views.js';

const AuditLogQuery = Type.Object(
  {
    actor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          "a dashboard user's id, an API key's id, or `operator` / `system` (every act of the operator or the platform)",
      }),
    ),
    action: Type.Optional(literalUnion(AUDIT_ACTIONS, { description: 'one act (`refund.created`, ...)' })),
    from: Type.Optional(DateFilter),
    to: Type.Optional(DateFilter),
    ...Pagination,
  },
  { additionalProperties: false },
);

/** `GET /audit-log`: who did what to the business, as the dashboard's Activity page shows it (decision 085). */
export const auditLogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;
  app.get(
    '/audit-log',
    {
      config: { auth: 'secret', scope: 'audit:read' },
      schema: {
        operationId: 'listAuditLog',
        summary: 'List the audit log',
        description:
          "Every sensitive act on the business, newest first, in the order the entries were written: the entries of the key's environment and those of no environment (the team, sign-ins, settings, the operator's acts). Each names who did it (a dashboard user, an API key by its hint, the operator or the platform), from where (IP, user agent), what and on what. Filters: `actor`, `action`, `from`, `to`. Entries are never edited or deleted and are kept at least a year. Needs the `audit:read` scope.",
        tags: ['Audit log'],
        querystring: AuditLogQuery,
        response: { 200: Envelope(Paginated(AuditEntry)) },
      },
    },
    async (request) => {
      const auth = requireAuth(request.auth);
      const window = pageWindow(request.query);
      const { from, to } = parseDateRange(request.query);
      const { actor, action } = request.query;
      const result = await listAuditEntries(
        db,
        { businessId: auth.businessId, environment: auth.environment, actor, action, from, to },
        window,
      );
      return {
        success: true as const,
        data: pageOf(window, { items: result.items.map(auditEntryView), total: result.total }),
      };
    },
  );
};
