import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Executor } from '../../db/transaction.js';
import type { AuditAction } from '../audit/actions.js';
import { Type } from 'typebox';
import { OPERATOR_WRITE, write } from '../../http/idempotency/plugin.js';
import { DASHBOARD_ROLES } from '../../db/schema.js';
import { Envelope, literalUnion } from '../../http/schemas.js';
import { PASSWORD_MAX_LENGTH } from '../dashboard/password.js';
import { actorOf, recordAudit } from '../audit/record.js';
import {
  createUser,
  disableUser,
  listUsers,
  newPasswordHash,
  resetPassword,
  type UserView,
} from '../dashboard/users.js';

const Role = literalUnion(DASHBOARD_ROLES);

const UserView = Type.Object({
  id: Type.String(),
  businessId: Type.String(),
  email: Type.String(),
  role: Role,
  disabled: Type.Boolean(),
  createdAt: Type.String(),
});
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
// Length rules are the service's (one message for the CLI and the dashboard); this only bounds the input.
const Password = Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH + 1 });

/**
 * Operators manage merchant dashboard users: `admin user create|list|disable|reset-password`. Each
 * change is recorded in the business's audit log as the dashboard's own acts are, by the operator.
 */
export const userAdminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.services;
  const audit = (trx: Executor, request: FastifyRequest, action: AuditAction, user: UserView) =>
    recordAudit(trx, {
      businessId: user.businessId,
      environment: null,
      action,
      actor: actorOf(request),
      target: { kind: 'dashboard_user', id: user.id },
      details: { email: user.email, role: user.role },
    });

  app.post(
    '/users',
    {
      config: { write: { ...OPERATOR_WRITE, secretFields: ['password'] } },
      schema: {
        body: Type.Object(
          {
            businessId: Type.String({ minLength: 1, maxLength: 64 }),
            email: Type.String({ minLength: 3, maxLength: 320 }),
            password: Password,
            role: Type.Optional(Role),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(UserView) },
      },
    },
    async (request, reply) => {
      const { password, ...user } = request.body;
      const passwordHash = await newPasswordHash(password, config.dashboard.passwordCost);
      return write(request, reply, 201, async (trx) => {
        const created = await createUser(trx, { ...user, passwordHash, role: user.role ?? 'owner' });
        await audit(trx, request, 'user.joined', created);
        return created;
      });
    },
  );

  app.get(
    '/users',
    {
      schema: {
        querystring: Type.Object({ businessId: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
        response: { 200: Envelope(Type.Object({ items: Type.Array(UserView) })) },
      },
    },
    async (request) => ({ success: true as const, data: { items: await listUsers(db, request.query.businessId) } }),
  );

  app.post(
    '/users/:id/disable',
    { schema: { params: IdParams, response: { 200: Envelope(UserView) } } },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const disabled = await disableUser(trx, request.params.id);
        await audit(trx, request, 'user.removed', disabled);
        return disabled;
      }),
  );

  app.post(
    '/users/:id/reset-password',
    {
      config: { write: { ...OPERATOR_WRITE, secretFields: ['password'] } },
      schema: {
        params: IdParams,
        body: Type.Object({ password: Password }, { additionalProperties: false }),
        response: { 200: Envelope(UserView) },
      },
    },
    async (request, reply) => {
      const passwordHash = await newPasswordHash(request.body.password, config.dashboard.passwordCost);
      return write(request, reply, 200, async (trx) => {
        const reset = await resetPassword(trx, request.params.id, passwordHash);
        await audit(trx, request, 'user.password_changed', reset);
        return reset;
      });
    },
  );
};
