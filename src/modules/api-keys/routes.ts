import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { API_WRITE, write } from '../../http/idempotency/plugin.js';
import { Envelope, Paginated, pageOf, pageWindow } from '../../http/schemas.js';
import { actorOf } from '../audit/record.js';
import { listEnvironmentKeys, type IssuedKey } from '../businesses/keys.js';
import { validAllowlistEntry } from '../keys/allowlist.js';
import { createKey, revokeKeyAct, rollKeyAct, type KeyActor } from './acts.js';
import { ApiKey, ApiKeyParams, CreateApiKeyBody, ListApiKeysQuery, NewApiKey, RollApiKeyBody } from './schemas.js';

const tags = ['API keys'];
const KEY_CODES = ['API_KEY_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;

const KEYS_TEXT =
  "Keys of the caller's business and environment, managed by a key that holds `api_keys:write` (never a default scope). A key never makes or rolls a key with a scope it lacks itself (SCOPE_ESCALATION), nor touches a key of the other environment (SANDBOX_MISMATCH). A publishable key may only hold reads. Each act is in the audit log; a roll sends `api_key.rolled`, a revocation `api_key.revoked`, and a key 24 h from its expiry `api_key.expiring` (decision 084).";

/** A new key's secret is answered once: what the idempotency key keeps has none. */
const withoutSecret = ({ key: _secret, ...rest }: IssuedKey) => rest;

/** API keys through the API (issue 53 item 3). */
export const apiKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, invalidation } = app.services;
  const afterCommit = () => invalidation.publish();
  const keyActor = (request: Parameters<typeof actorOf>[0]): KeyActor => ({
    actor: actorOf(request),
    scopes: requireAuth(request.auth).scopes,
  });

  app.get(
    '/api-keys',
    {
      config: { auth: 'secret', scope: 'api_keys:write' },
      schema: {
        operationId: 'listApiKeys',
        summary: 'List API keys',
        description: `The keys of the caller's environment, newest first, paginated, masked (\`hint\`), with their \`scopes\`, \`ipAllowlist\`, \`status\`, \`lastUsedAt\` (to the minute) and \`lastUsedIp\`, and \`expiresAt\`.\n\n${KEYS_TEXT}`,
        tags,
        querystring: ListApiKeysQuery,
        response: { 200: Envelope(Paginated(ApiKey)) },
      },
    },
    async (request) => {
      const auth = requireAuth(request.auth);
      const window = pageWindow(request.query);
      const result = await listEnvironmentKeys(db, auth, window);
      return { success: true as const, data: pageOf(window, result) };
    },
  );

  app.post(
    '/api-keys',
    {
      config: {
        auth: 'secret',
        scope: 'api_keys:write',
        write: API_WRITE,
        errorCodes: ['SCOPE_ESCALATION', 'SANDBOX_MISMATCH'],
        openapi: { requestExample: { name: 'Till 2', kind: 'secret', scopes: ['intents:read', 'intents:write'] } },
      },
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key',
        description: `A key of the caller's environment: \`name\`, \`kind\` (secret or publishable), \`scopes\` (without them: the default scopes the caller holds; a publishable key's reads), \`ipAllowlist\` (addresses or CIDR ranges; empty: any), \`expiresAt\` (in the future; without it the key does not expire). The secret (\`key\`) is in this answer only: a replay of the same idempotency key answers without it.\n\n${KEYS_TEXT}`,
        tags,
        body: CreateApiKeyBody,
        response: { 201: Envelope(NewApiKey) },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request.auth);
      const { name, kind, environment, scopes, ipAllowlist, expiresAt } = request.body;
      if (environment !== undefined && environment !== auth.environment) {
        throw new ApiError('SANDBOX_MISMATCH', `A ${auth.environment} key makes ${auth.environment} keys only.`);
      }
      const bad = (ipAllowlist ?? []).filter((entry) => !validAllowlistEntry(entry));
      if (bad.length > 0) {
        throw new ApiError(
          'VALIDATION_ERROR',
          `Not an IP address or CIDR range: ${bad.join(', ')}`,
          bad.map(() => ({ field: 'body.ipAllowlist', message: 'must be an IP address or CIDR range' })),
        );
      }
      const expiry = expiresAt === undefined ? null : new Date(expiresAt);
      if (expiry && !(expiry.getTime() > Date.now())) {
        throw new ApiError('VALIDATION_ERROR', 'expiresAt must be in the future.', [
          { field: 'body.expiresAt', message: 'must be in the future' },
        ]);
      }
      return write(
        request,
        reply,
        201,
        (trx) =>
          createKey(trx, keyActor(request), {
            businessId: auth.businessId,
            environment: auth.environment,
            name: name.trim(),
            kind,
            scopes,
            ipAllowlist,
            expiresAt: expiry,
          }),
        { kept: withoutSecret },
      );
    },
  );

  app.post(
    '/api-keys/:id/roll',
    {
      config: {
        auth: 'secret',
        scope: 'api_keys:write',
        write: API_WRITE,
        errorCodes: [...KEY_CODES, 'SCOPE_ESCALATION', 'API_KEY_NOT_ACTIVE'],
        openapi: { requestExample: { expiresIn: 86400 } },
      },
      schema: {
        operationId: 'rollApiKey',
        summary: 'Roll an API key',
        description: `A new key now, with the same name, kind, scopes and allowlist (its secret in this answer only); the old key keeps working for \`expiresIn\` seconds (0 to 604,800: at most 7 days, and never beyond an expiry it already had), then answers INVALID_API_KEY. Only an active key rolls (API_KEY_NOT_ACTIVE). Sends \`api_key.rolled\`.\n\n${KEYS_TEXT}`,
        tags,
        params: ApiKeyParams,
        body: RollApiKeyBody,
        response: { 201: Envelope(NewApiKey) },
      },
    },
    async (request, reply) =>
      write(
        request,
        reply,
        201,
        (trx) =>
          rollKeyAct(trx, keyActor(request), requireAuth(request.auth), request.params.id, request.body.expiresIn),
        { kept: withoutSecret, afterCommit },
      ),
  );

  app.post(
    '/api-keys/:id/revoke',
    {
      config: { auth: 'secret', scope: 'api_keys:write', write: API_WRITE, errorCodes: KEY_CODES },
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key',
        description: `Refused from now on, on every process (a rolled key in its overlap too). Revoking a revoked key answers it as it is. Sends \`api_key.revoked\`.\n\n${KEYS_TEXT}`,
        tags,
        params: ApiKeyParams,
        response: { 200: Envelope(ApiKey) },
      },
    },
    async (request, reply) =>
      write(
        request,
        reply,
        200,
        (trx) => revokeKeyAct(trx, keyActor(request), requireAuth(request.auth), request.params.id),
        { afterCommit },
      ),
  );
};
