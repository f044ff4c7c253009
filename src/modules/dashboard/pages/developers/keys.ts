import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../../../../db/schema.js';
import { ApiError, invalid } from '../../../../http/errors.js';
import { FORM_WRITE } from '../../../../http/idempotency/plugin.js';
import { literalUnion } from '../../../../http/schemas.js';
import { createKey, publishableAllows, revokeKeyAct, rollKeyAct, type KeyActor } from '../../../api-keys/acts.js';
import { actorOf } from '../../../audit/record.js';
import { listEnvironmentKeys } from '../../../businesses/keys.js';
import { validAllowlistEntry } from '../../../keys/allowlist.js';
import { allScopes } from '../../../keys/scopes.js';
import { scopesMemberMayGive } from '../../../team/permissions.js';
import { at, DASHBOARD, requireSession, sendPage } from '../../context.js';
import type { DashboardSession } from '../../sessions.js';
import { dashboardWrite, Flash, Token } from '../../write.js';
import { pageQuery } from '../../page-query.js';

/** The overlaps the roll form offers, in seconds: at once, an hour, a day, a week (the API's most). */
export const ROLL_OVERLAPS = ['0', '3600', '86400', '604800'] as const;

const FlashQuery = pageQuery(Flash);
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const TokenForm = Type.Object(Token, { additionalProperties: false });
const KeyForm = Type.Object(
  {
    ...Token,
    name: Type.String({ maxLength: 100 }),
    kind: literalUnion(['secret', 'publishable']),
    scopes: Type.Optional(
      Type.Union([Type.String({ maxLength: 40 }), Type.Array(Type.String({ maxLength: 40 }), { maxItems: 50 })]),
    ),
    ipAllowlist: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);
const RollForm = Type.Object({ ...Token, overlap: literalUnion(ROLL_OVERLAPS) }, { additionalProperties: false });

/** A form's repeated field (ticked boxes) as a list: none, one, or several. */
export function many(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** The key exists in the session's business and mode, else it does not exist here. */
async function checkOwnKey(trx: Transaction<DB>, session: DashboardSession, id: string): Promise<void> {
  const key = await trx
    .selectFrom('api_keys')
    .select('id')
    .where('id', '=', id)
    .where('business_id', '=', session.businessId)
    .where('environment', '=', session.environment)
    .executeTakeFirst();
  if (!key) throw new ApiError('API_KEY_NOT_FOUND', 'No such API key.');
}

const KEYS = `${DASHBOARD}/developers/keys`;

/** A member acting on keys: never giving a key a scope their role could not use (decision 083). */
function memberActor(request: FastifyRequest, session: DashboardSession): KeyActor {
  return { actor: actorOf(request), scopes: scopesMemberMayGive(session.role, session.environment) };
}

/** The Developers page's API keys (issue 53 item 3): the API's acts, for a member who may manage developers. */
export const keyPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, invalidation } = app.services;
  const manage = { dashboard: 'developers.manage', write: FORM_WRITE } as const;
  const publish = () => invalidation.publish();

  app.get(
    at(KEYS),
    { config: { dashboard: 'developers.manage' }, schema: { hide: true, querystring: FlashQuery } },
    async (request, reply) => {
      const session = requireSession(request);
      const { items } = await listEnvironmentKeys(db, session, { limit: 200, offset: 0 });
      return sendPage(request, reply, 'keys', {
        // A rolled key is shown while its overlap lasts: after it, its successor is the key.
        keys: items.filter(
          (key) => key.status !== 'rotated' || (key.expiresAt !== null && Date.parse(key.expiresAt) > Date.now()),
        ),
        scopes: scopesMemberMayGive(session.role, session.environment),
        overlaps: ROLL_OVERLAPS,
      });
    },
  );

  app.post(at(KEYS), { config: manage, schema: { hide: true, body: KeyForm } }, async (request, reply) =>
    dashboardWrite(request, reply, KEYS, async (trx, session) => {
      const name = request.body.name.trim();
      if (name === '') throw invalid('name', 'must not be blank');
      // A publishable key takes the reads among the scopes ticked: the form ticks writes by default.
      const ticked = many(request.body.scopes);
      const scopes = request.body.kind === 'publishable' ? ticked.filter(publishableAllows) : ticked;
      const unknown = scopes.filter((scope) => !(allScopes as readonly string[]).includes(scope));
      if (scopes.length === 0 || unknown.length > 0) throw invalid('scopes', 'must name at least one known scope');
      const ipAllowlist = (request.body.ipAllowlist ?? '')
        .split(/[\s,]+/)
        .map((entry) => entry.trim())
        .filter(Boolean);
      if (ipAllowlist.length > 100 || !ipAllowlist.every(validAllowlistEntry)) {
        throw invalid('ipAllowlist', 'must be IP addresses or CIDR ranges');
      }
      const key = await createKey(trx, memberActor(request, session), {
        businessId: session.businessId,
        environment: session.environment,
        name,
        kind: request.body.kind,
        scopes,
        ipAllowlist,
      });
      return { redirect: KEYS, page: { template: 'key-created', data: { key } } };
    }),
  );

  app.post(
    at(`${KEYS}/:id/roll`),
    { config: manage, schema: { hide: true, params: IdParams, body: RollForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, KEYS, async (trx, session) => {
        await checkOwnKey(trx, session, request.params.id);
        const overlap = Number(request.body.overlap);
        const key = await rollKeyAct(trx, memberActor(request, session), session, request.params.id, overlap);
        return { redirect: KEYS, page: { template: 'key-created', data: { key, overlap } }, afterCommit: publish };
      }),
  );

  app.post(
    at(`${KEYS}/:id/revoke`),
    { config: manage, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, KEYS, async (trx, session) => {
        await checkOwnKey(trx, session, request.params.id);
        await revokeKeyAct(trx, { actor: actorOf(request) }, session, request.params.id);
        return { redirect: KEYS, afterCommit: publish };
      }),
  );
};
