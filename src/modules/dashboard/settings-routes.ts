import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { renameBusiness } from '../businesses/service.js';
import { getFeePlan } from '../payments/fee-plans.js';
import { at, DASHBOARD, requireSession, sendPage } from './context.js';
import { changeUser, createUser, listUsers, newPasswordHash } from './users.js';
import { dashboardWrite, Token } from './write.js';
import { FORM_WRITE } from '../../http/idempotency/plugin.js';

const SETTINGS = `${DASHBOARD}/settings`;

const Role = Type.Union([Type.Literal('owner'), Type.Literal('viewer')]);
const FlashQuery = Type.Object(
  { notice: Type.Optional(Type.String({ maxLength: 20 })), error: Type.Optional(Type.String({ maxLength: 64 })) },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const TokenForm = Type.Object(Token, { additionalProperties: false });
const NameForm = Type.Object({ ...Token, name: Type.String({ maxLength: 400 }) }, { additionalProperties: false });
const InviteForm = Type.Object(
  {
    ...Token,
    email: Type.String({ maxLength: 320 }),
    password: Type.String({ maxLength: 1000 }),
    role: Role,
  },
  { additionalProperties: false },
);
const RoleForm = Type.Object({ ...Token, role: Role }, { additionalProperties: false });

/** Settings: the business's name, its dashboard users and their roles (owners change them), its fee plan (read only). */
export const settingsPages: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;
  const owner = { dashboard: 'owner', write: FORM_WRITE } as const;

  app.get(at(SETTINGS), { schema: { hide: true, querystring: FlashQuery } }, async (request, reply) => {
    const session = requireSession(request);
    const [users, feePlan] = await Promise.all([listUsers(db, session.businessId), getFeePlan(db, session.businessId)]);
    return sendPage(request, reply, 'settings', { users, feePlan });
  });

  app.post(
    at(`${SETTINGS}/business`),
    { config: owner, schema: { hide: true, body: NameForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, SETTINGS, async (trx, session) => {
        await renameBusiness(trx, session.businessId, request.body.name);
        return { redirect: SETTINGS };
      }),
  );

  app.post(
    at(`${SETTINGS}/users`),
    {
      config: { ...owner, write: { ...FORM_WRITE, secretFields: [...FORM_WRITE.secretFields, 'password'] } },
      schema: { hide: true, body: InviteForm },
    },
    async (request, reply) => {
      const { email, password, role } = request.body;
      // Hashed before the write's transaction (the hash is slow); a refused password is refused
      // inside it, like every refusal of a form.
      const passwordHash = await newPasswordHash(password, config.dashboard.passwordCost).catch(
        (error: unknown) => error as Error,
      );
      return dashboardWrite(request, reply, SETTINGS, async (trx, session) => {
        if (passwordHash instanceof Error) throw passwordHash;
        await createUser(trx, { businessId: session.businessId, email, passwordHash, role });
        return { redirect: SETTINGS };
      });
    },
  );

  app.post(
    at(`${SETTINGS}/users/:id/role`),
    { config: owner, schema: { hide: true, params: IdParams, body: RoleForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, SETTINGS, async (trx, session) => {
        await changeUser(trx, session.businessId, request.params.id, { role: request.body.role });
        return { redirect: SETTINGS };
      }),
  );

  app.post(
    at(`${SETTINGS}/users/:id/disable`),
    { config: owner, schema: { hide: true, params: IdParams, body: TokenForm } },
    async (request, reply) =>
      dashboardWrite(request, reply, SETTINGS, async (trx, session) => {
        await changeUser(trx, session.businessId, request.params.id, { disable: true });
        // Disabling oneself ends this session too: the next page is the sign-in page.
        return { redirect: SETTINGS };
      }),
  );
};
