import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';
import { Type } from 'typebox';
import { requestFingerprint } from '../../src/http/idempotency/fingerprint.js';
import { API_WRITE, write } from '../../src/http/idempotency/plugin.js';
import { Envelope } from '../../src/http/schemas.js';

/**
 * Routes that exercise the platform's mechanisms (auth modes, idempotency, rate limits) before
 * any feature module exists. Mounted only by tests, on the real app. The counter write counts
 * executions in the database so a test can prove a request ran exactly once.
 */
export const probeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/probe/read',
    {
      config: { auth: 'publishable', scope: 'intents:read' },
      schema: {
        operationId: 'probeRead',
        summary: 'A read that answers who the key is',
        response: { 200: Envelope(Type.Object({ businessId: Type.String(), sandbox: Type.Boolean() })) },
      },
    },
    async (request) => ({
      success: true as const,
      data: { businessId: request.auth!.businessId, sandbox: request.auth!.sandbox },
    }),
  );

  app.post(
    '/probe/counter',
    {
      config: { auth: 'secret', scope: 'intents:write', write: API_WRITE },
      schema: {
        operationId: 'probeCounter',
        summary: 'A write that counts its executions',
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 2000 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Envelope(Type.Object({ name: Type.String(), executions: Type.Integer() })) },
      },
    },
    async (request, reply) => {
      if (request.headers['x-probe-fail'] === '1') throw new Error('probe failure on purpose');
      const { name, delayMs } = request.body;
      return write(request, reply, 201, async (trx) => {
        const row = await trx
          .insertInto('platform_settings')
          .values({ name: `probe:${name}`, value: '1' })
          .onConflict((conflict) =>
            conflict.column('name').doUpdateSet({ value: sql`to_jsonb((platform_settings.value)::text::int + 1)` }),
          )
          .returning('value')
          .executeTakeFirstOrThrow();
        if (delayMs) await sql`SELECT pg_sleep(${delayMs / 1000})`.execute(trx);
        if (request.headers['x-probe-key-taken'] === '1') {
          // Another request with the same key and body commits its answer while this one runs
          // (PostgreSQL only: it needs a second session).
          await request.server.services.db
            .insertInto('idempotency_keys')
            .values({
              business_id: request.auth!.businessId,
              environment: request.auth!.environment,
              idempotency_key: String(request.headers['x-idempotency-key']),
              fingerprint: requestFingerprint(request, request.body),
              state: 'done',
              response_status: 201,
              response_body: JSON.stringify({ success: true, data: { name, executions: 0 } }),
            })
            .execute();
        }
        return { name, executions: Number(row.value) };
      });
    },
  );

  app.post(
    '/probe/sandbox-only',
    {
      config: { auth: 'secret', scope: 'intents:write', sandboxOnly: true, write: API_WRITE },
      schema: { operationId: 'probeSandboxOnly', summary: 'A write of test keys only' },
    },
    async (request, reply) => write(request, reply, 200, async () => ({ environment: request.auth!.environment })),
  );
};

/** How many times the counter probe executed for `name`, read straight from the database. */
export async function probeExecutions(db: Kysely<DB>, name: string) {
  const row = await db
    .selectFrom('platform_settings')
    .select('value')
    .where('name', '=', `probe:${name}`)
    .executeTakeFirst();
  return row ? Number(row.value) : 0;
}
