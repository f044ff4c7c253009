import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifySchema,
} from 'fastify';
import { sql } from 'kysely';
import { authenticate, trustProxyOption } from './http/auth.js';
import { registerCors } from './http/cors.js';
import { docsPageOptions, PRODUCT_NAME } from './http/docs-page.js';
import type { AppServices } from './http/context.js';
import { handleClientError, handleFrameworkError, sendError, toApiError } from './http/error-handler.js';
import { ApiError } from './http/errors.js';
import { answerError, checkIdempotencyKey, registerWritePath } from './http/idempotency/plugin.js';
import { requireDeclaredMediaTypes } from './http/media-types.js';
import { registerMetrics } from './http/metrics.js';
import { completeDocument, RouteConfigs } from './http/openapi.js';
import { buildResponseSerializers } from './http/schema-compilers.js';
import { ErrorEnvelope } from './http/schemas.js';
import { checkDateRanges, strictDeveloperQueries, strictValidatorCompiler } from './http/validation.js';
import { randomBase62 } from './lib/ids.js';
import { adminRoutes } from './modules/admin/routes.js';
import { DASHBOARD } from './modules/dashboard/context.js';
import { eventPayloads } from './modules/event-payloads.js';
import { rootModules } from './modules/index.js';
import { welcomeRoutes } from './modules/welcome/routes.js';

export const API_BASE = '/api/v1/dev';
/** Where the Swagger UI serves the API's documentation. */
const DOCS = '/docs';
const BODY_LIMIT_BYTES = 1024 * 1024;
/** The longest path segment the router takes, in UTF-16 units once decoded. */
const MAX_PATH_SEGMENT = 512;
const REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export interface BuildAppOptions {
  logger?: FastifyBaseLogger | boolean;
  /** Feature modules mounted under the API base; tests may add their own probes. */
  developerRoutes?: FastifyPluginAsync[];
  /** Compile every route's schemas while building, not on each route's first request (a test's check). */
  compileSchemasAtStart?: boolean;
}

export type App = FastifyInstance;

export async function buildApp(services: AppServices, options: BuildAppOptions = {}): Promise<App> {
  const eager = options.compileSchemasAtStart ?? false;
  const app = Fastify({
    ...(typeof options.logger === 'object' ? { loggerInstance: options.logger } : { logger: options.logger ?? false }),
    trustProxy: trustProxyOption(services.config.trustProxy),
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
    bodyLimit: BODY_LIMIT_BYTES,
    // One log line per request, written by the onResponse hook below with the key id.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : `req_${randomBase62(20)}`;
    },
    // A path segment may be a product's externalId (256 characters by the contract, counted
    // decoded; each route's params schema holds it to that). The router counts UTF-16 units of the
    // decoded segment, so twice 256 lets an externalId of characters outside the BMP through too.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT },
    schemaController: { compilersFactory: { buildSerializer: buildResponseSerializers(eager) } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(strictValidatorCompiler(eager));
  app.decorate('services', services);
  app.decorateRequest('auth', undefined);
  app.decorateRequest('operator', false);

  // An empty body with a JSON content type (common on bodiless POST/DELETE) means "no body".
  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES },
    (request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      return defaultJsonParser(request, text, done);
    },
  );

  app.addSchema(ErrorEnvelope);
  // The Developer API and the storefront's customer API; pages, media and the admin API are not.
  const documented = (url: string, schema?: FastifySchema): boolean =>
    (url.startsWith(API_BASE) || url.startsWith('/storefront/')) && !url.includes('*') && schema?.hide !== true;
  const routeConfigs = new RouteConfigs(documented);
  app.addHook('onRoute', (route) => routeConfigs.record(route));
  registerWritePath(app);
  strictDeveloperQueries(app, API_BASE);
  checkDateRanges(app, API_BASE);
  requireDeclaredMediaTypes(app, [DASHBOARD]);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: PRODUCT_NAME,
        version: '1.0.0',
        description: 'Wallet payments in MRU, shop catalog, orders and signed webhooks. Amounts are integer centimes.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'sk_/pk_ test or live key' } },
      },
      security: [{ apiKey: [] }],
    },
    hideUntagged: false,
    transform: ({ schema, url }) => ({ schema: documented(url, schema) ? schema : { ...schema, hide: true }, url }),
    transformObject: (documents) =>
      completeDocument(
        ('openapiObject' in documents ? documents.openapiObject : documents.swaggerObject) as Record<string, unknown>,
        routeConfigs,
        eventPayloads,
      ),
  });

  // The hooks that do not wait on anything are callback-style: an async hook costs every request
  // a promise and a microtask turn.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', String(request.id));
    done();
  });
  registerCors(app, API_BASE);
  app.addHook('onRequest', async (request, reply) => {
    await authenticate(request, reply);
    checkIdempotencyKey(request);
  });

  app.addHook('preValidation', (request, _reply, done) => {
    // A bodiless write (POST .../cancel) validates as an empty object against its body schema.
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
    done();
  });

  const metrics = await registerMetrics(app, services);
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observe(request, reply);
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? null,
        statusCode: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        keyId: request.auth?.keyId ?? null,
      },
      'request',
    );
    done();
  });

  app.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error as Error, request);
    // A body the parser refused never reached the route: nothing to store under its key.
    if (!(error as { code?: string }).code?.startsWith('FST_ERR_CTP')) {
      try {
        const answered = await answerError(request, reply, apiError);
        if (answered) return answered;
      } catch (claimError) {
        return sendError(toApiError(claimError as Error, request), request, reply);
      }
    }
    return sendError(apiError, request, reply);
  });
  app.setNotFoundHandler((request, reply) => {
    reply.header('X-Request-Id', String(request.id));
    return sendError(
      new ApiError('ENDPOINT_NOT_FOUND', `No endpoint ${request.method} ${request.url.split('?')[0]}.`),
      request,
      reply,
    );
  });

  app.get('/health', { schema: { hide: true } }, async () => ({ success: true, data: { status: 'ok' } }));
  app.get('/ready', { schema: { hide: true } }, async (request, reply) => {
    try {
      await sql`SELECT 1`.execute(services.db);
      return { success: true, data: { status: 'ready', database: services.database.kind } };
    } catch (error) {
      request.log.error({ err: error }, 'database not reachable');
      return sendError(new ApiError('NOT_READY'), request, reply);
    }
  });

  await app.register(welcomeRoutes({ apiBase: API_BASE, docs: DOCS }));

  await app.register(
    async (dev) => {
      dev.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      for (const routes of options.developerRoutes ?? []) await dev.register(routes);
    },
    { prefix: API_BASE },
  );
  await app.register(adminRoutes, { prefix: '/api/v1/admin' });
  for (const routes of rootModules) await app.register(routes);
  await app.register(swaggerUi, docsPageOptions(DOCS));

  return app;
}
