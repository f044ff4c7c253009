import type { FastifyContextConfig, FastifySchema, RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import Value from 'typebox/value';
import { errorCatalogue, type ErrorCode } from './errors.js';
import { mediaTypesOf } from './media-types.js';

/**
 * Completes the document @fastify/swagger builds from the routes, in one place: the key each
 * operation takes, the `X-Idempotency-Key` parameter, every error answer with the codes it can
 * carry, named component schemas, tags, and the `webhooks` section (OpenAPI 3.1). Each route
 * documents itself: `operationId`, `summary` and `description` on its schema (read by
 * @fastify/swagger), the codes its own logic answers and what its schemas cannot say on its config
 * (below); the codes of authentication, validation and idempotency come from its auth config.
 */

/** What the document says of an operation that its schemas cannot. */
export interface OperationExtras {
  /** The example of its JSON body. */
  requestExample?: Record<string, unknown>;
  /** An upload: what the file holds (a multipart `file` field, or the whole body for a text type). */
  upload?: string;
  /**
   * The body is required although its schema takes `{}` (the operation needs one of its fields,
   * which the schema cannot say): such bodies are otherwise documented as optional.
   */
  bodyRequired?: true;
  /** The success answer is CSV text. */
  csv?: true;
  /** Other media types the success answer may take besides JSON (chosen by a query parameter). */
  alsoAnswers?: readonly ('text/csv' | 'text/html')[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The codes the route's own logic can answer (those of auth, validation and idempotency are added). */
    errorCodes?: readonly ErrorCode[];
    openapi?: OperationExtras;
  }
}

/**
 * An operation's docs kept in its module's docs.ts when its route file would grow long: the route
 * spreads `schema` into its schema and `config` into its config.
 */
export interface OperationDocs {
  schema: { operationId: string; summary: string; description: string };
  config?: Pick<FastifyContextConfig, 'errorCodes' | 'openapi'>;
}

/** What the webhooks section lists: every event a receiver can get, with when it is sent and its payload. */
export type WebhookPayloads = Record<string, { when: string; schema: TSchema }>;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

type Json = Record<string, unknown>;

/** What the document needs of a route beyond its schemas. */
interface RouteFacts {
  config: FastifyContextConfig;
  /** The media types its body may have (media-types.ts). */
  mediaTypes: readonly string[];
  /**
   * Whether it may be sent without a body: a request without one is checked as `{}` (app.ts),
   * so a body schema that `{}` satisfies (a cancel, a refund of everything) makes the body optional.
   */
  bodyOptional: boolean;
}

/**
 * Route facts by `METHOD /full/path` in OpenAPI form, filled by an onRoute hook. A route the
 * document shows (`documents` says which URLs it shows) without an operationId or a summary is
 * refused, so the app does not start with an operation that has no name.
 */
export class RouteConfigs {
  private readonly facts = new Map<string, RouteFacts>();

  constructor(private readonly documents: (url: string, schema: FastifySchema | undefined) => boolean) {}

  record(route: RouteOptions): void {
    if (this.documents(route.url, route.schema) && !(route.schema?.operationId && route.schema.summary)) {
      throw new Error(
        `${[route.method].flat().join(',')} ${route.url} is in the API document: its schema needs an operationId and a summary`,
      );
    }
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const body = route.schema?.body as TSchema | undefined;
    const facts: RouteFacts = {
      config: (route.config ?? {}) as FastifyContextConfig,
      mediaTypes: mediaTypesOf(route.schema),
      bodyOptional: body === undefined || Value.Check(body, {}),
    };
    for (const method of [route.method].flat()) this.facts.set(`${method.toUpperCase()} ${path}`, facts);
  }

  get(method: string, path: string): FastifyContextConfig {
    return this.facts.get(`${method.toUpperCase()} ${path}`)?.config ?? {};
  }

  factsOf(method: string, path: string): RouteFacts | undefined {
    return this.facts.get(`${method.toUpperCase()} ${path}`);
  }
}

/** The schema of an uploaded file's part, or of a raw body of a text media type. */
function fileBodySchema(mediaType: string, upload: string): Json {
  if (mediaType === 'multipart/form-data') {
    return {
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', format: 'binary', description: upload } },
    };
  }
  return { type: 'string', description: `${upload}, as the whole body` };
}

const GETTING_STARTED = `Wallet payments in MRU, a shop catalog, orders and signed webhooks. Amounts are integer centimes.

## Getting started
1. Take the sandbox secret key (\`sk_test_...\`) printed at the first start, or ask an operator for one.
2. Send it on every request: \`Authorization: Bearer sk_test_...\`.
3. Every write (POST, PUT, PATCH, DELETE) carries an \`X-Idempotency-Key\` (a UUID): the same key returns the first answer and never runs the operation twice.
4. Create an intent: \`POST /api/v1/dev/intents\` with \`{ "amount": 150000 }\`, send the payer to its \`payUrl\`, and learn the outcome from the \`payment.confirmed\` webhook (see **Webhooks** below) or by polling \`GET /api/v1/dev/events?after=evt_...\`.
5. In the sandbox, \`POST /api/v1/dev/intents/{referenceNumber}/simulate\` pays it without a wallet.

The TypeScript SDK (\`packages/sdk\`) wraps every operation below, with retries, idempotency keys and webhook verification; \`npx commerce listen\` forwards events to a local URL.

## Errors
Every error answers \`{ success: false, error: { code, message, statusCode, requestId, details? } }\`. Branch on \`code\`; the message may change. A query parameter or body field an operation does not name is refused (400 \`VALIDATION_ERROR\`).

## Webhooks
Each event is POSTed to the endpoints subscribed to it, signed: \`X-Commerce-Signature: sha256=<hex HMAC-SHA256 of "<X-Commerce-Timestamp>.<raw body>">\` (two signatures, comma separated, for 24 hours after a secret rotation). Every payload carries \`sequence\`, which counts the events of one object: drop an event whose sequence is lower than one you already handled for that object.`;

const TAGS = [
  { name: 'Payment intents', description: 'Ask for a payment, follow it, cancel or refund it.' },
  {
    name: 'Payments',
    description: 'Every attempt to pay an intent or an order: its method, outcome, fees and settlement.',
  },
  { name: 'Events', description: 'Every event of the business, for polling consumers and `commerce listen`.' },
  { name: 'Webhooks', description: 'Endpoints, the delivery log, retries and recovery.' },
  { name: 'Products', description: 'The shop catalog, images, stock and CSV import/export.' },
  { name: 'Orders', description: 'Customer orders and their workflow.' },
  { name: 'Balance', description: 'The merchant balance.' },
  { name: 'Payouts', description: 'Money out of the balance to wallets, one at a time or in batches.' },
  { name: 'Sellers', description: "A marketplace's sellers, each with its own balance." },
  { name: 'Audit log', description: 'Who did what to the business, when and from where: append-only.' },
];

/** The codes every operation can answer, from how its route is configured. */
function codesOf(method: string, config: FastifyContextConfig): ErrorCode[] {
  const codes: ErrorCode[] = [];
  const auth = config.auth ?? 'none';
  if (auth !== 'none') {
    codes.push('MISSING_CREDENTIALS', 'INVALID_AUTH_HEADER', 'INVALID_API_KEY', 'API_ACCESS_NOT_ACTIVE');
    codes.push('LIVE_ACCESS_NOT_APPROVED', 'IP_NOT_ALLOWED', 'FEATURE_DISABLED', 'RATE_LIMITED');
    if (auth === 'secret') codes.push('SECRET_KEY_REQUIRED');
    if (config.sandboxOnly) codes.push('SANDBOX_ONLY');
    if (config.scope) codes.push('SCOPE_REQUIRED');
  }
  codes.push('VALIDATION_ERROR');
  if (WRITE_METHODS.has(method) && auth !== 'none') {
    codes.push('IDEMPOTENCY_KEY_REQUIRED', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_PROGRESS');
  }
  // Fastify reads the body of every write, whether or not the route takes one (a DELETE too); a
  // GET's body is never read.
  if (WRITE_METHODS.has(method)) codes.push('INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  codes.push('DATABASE_UNAVAILABLE', 'INTERNAL_ERROR');
  return codes;
}

/** The error envelope with `code` narrowed to the codes one answer can carry. */
function envelopeWithCodes(envelope: Json, codes: readonly ErrorCode[]): Json {
  const copy = JSON.parse(JSON.stringify(envelope)) as Json & { properties: { error: { properties: Json } } };
  delete copy.title;
  copy.properties.error.properties.code = { $ref: '#/components/schemas/ErrorCode', enum: codes };
  return copy;
}

function errorResponses(codes: readonly ErrorCode[], envelope: Json): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = errorCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Json = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `Error. Codes: ${list.join(', ')}.`,
      ...(status === 429
        ? { headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } } }
        : {}),
      content: {
        'application/json': {
          schema: envelopeWithCodes(envelope, list),
          examples: Object.fromEntries(list.map((code) => [code, { $ref: `#/components/examples/${code}` }])),
        },
      },
    };
  }
  return responses;
}

/** One example per error code the document names, referenced from the responses. */
function errorExamples(paths: Json): Json {
  const named = new Set([...JSON.stringify(paths).matchAll(/#\/components\/examples\/([A-Z_]+)/g)].map((m) => m[1]!));
  return Object.fromEntries(
    [...named].sort().map((name) => {
      const code = name as ErrorCode;
      const { status, message } = errorCatalogue[code];
      return [
        code,
        {
          summary: code,
          value: {
            success: false,
            error: { code, message, statusCode: status, requestId: 'req_4fP2kq9ZtX0bLmWc7sYd' },
          },
        },
      ];
    }),
  );
}

/**
 * Moves object schemas that carry a `title` (Intent, Product, Order...) into components.schemas
 * and points at them, so generated clients get named types. Two different schemas of one title:
 * the second stays inline.
 */
function hoistTitledSchemas(node: unknown, schemas: Json, atRoot = true): unknown {
  if (Array.isArray(node)) return node.map((item) => hoistTitledSchemas(item, schemas, false));
  if (node === null || typeof node !== 'object') return node;
  const object = node as Json;
  const walked: Json = {};
  for (const [key, value] of Object.entries(object)) walked[key] = hoistTitledSchemas(value, schemas, false);
  const title = object.title;
  if (!atRoot && typeof title === 'string' && object.type === 'object' && /^[A-Za-z][A-Za-z0-9]*$/.test(title)) {
    const existing = schemas[title];
    if (existing === undefined) {
      schemas[title] = walked;
      return { $ref: `#/components/schemas/${title}` };
    }
    if (JSON.stringify(existing) === JSON.stringify(walked)) return { $ref: `#/components/schemas/${title}` };
  }
  return walked;
}

/** The `transformObject` of @fastify/swagger. */
export function completeDocument(document: Json, routes: RouteConfigs, webhookPayloads: WebhookPayloads): Json {
  const components = (document.components ?? {}) as Json;
  const schemas = { ...((components.schemas ?? {}) as Json) };
  // The error envelope is registered with $id ErrorEnvelope; swagger names it def-0.
  let envelope: Json = {};
  for (const [name, schema] of Object.entries(schemas)) {
    if (name.startsWith('def-') && (schema as Json).title === 'Error') {
      delete schemas[name];
      envelope = schema as Json;
    }
  }
  const refRenamed = (document.paths ?? {}) as Record<string, Json>;

  const paths: Record<string, Json> = {};
  for (const [path, item] of Object.entries(refRenamed)) {
    const completed: Json = {};
    for (const [methodName, value] of Object.entries(item)) {
      if (!(HTTP_METHODS as readonly string[]).includes(methodName)) {
        completed[methodName] = value;
        continue;
      }
      const method = methodName.toUpperCase();
      const { operationId, summary, description, ...rest } = value as Json;
      const operation = { ...rest };
      const config = routes.get(method, path);
      const extras = config.openapi ?? {};
      const auth = config.auth ?? 'none';
      const ordered: Json = {
        operationId,
        summary,
        description: [
          description ?? '',
          auth === 'none'
            ? 'No key.'
            : `Key: ${auth === 'secret' ? 'secret (sk_)' : 'secret or publishable'}` +
              `${config.scope ? `, scope \`${config.scope}\`` : ''}${config.sandboxOnly ? ', test keys only' : ''}.`,
        ]
          .filter(Boolean)
          .join('\n\n'),
        ...operation,
      };
      if (auth === 'none') ordered.security = [];
      if (WRITE_METHODS.has(method) && auth !== 'none') {
        ordered.parameters = [
          {
            in: 'header',
            name: 'X-Idempotency-Key',
            required: true,
            description:
              'A unique string per operation (a UUID). Sending it again returns the first answer without running the operation twice (kept 24 hours).',
            schema: { type: 'string', minLength: 1, maxLength: 255 },
            example: '5f0c3a52-8e8f-4b5e-9c7a-2d5b8f1e6a10',
          },
          ...((operation.parameters as unknown[]) ?? []),
        ];
      }
      const facts = routes.factsOf(method, path);
      if (extras.upload && !operation.requestBody) {
        // The route's media types: a multipart form with the file, or the file as the body (CSV).
        const mediaTypes = facts?.mediaTypes ?? ['multipart/form-data'];
        operation.requestBody = {
          required: true,
          content: Object.fromEntries(
            mediaTypes.map((type) => [type, { schema: fileBodySchema(type, extras.upload!) }]),
          ),
        };
        ordered.requestBody = operation.requestBody;
      } else if (operation.requestBody && facts?.bodyOptional && !extras.bodyRequired) {
        // decisions.md: an action without a body may be sent with none.
        operation.requestBody = { ...(operation.requestBody as Json), required: false };
        ordered.requestBody = operation.requestBody;
      }
      if (extras.csv) {
        const responses = operation.responses as Record<string, Json>;
        responses['200'] = { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } };
      }
      if (extras.alsoAnswers) {
        const success = (operation.responses as Record<string, { content?: Json }>)['200'];
        if (success?.content) {
          for (const type of extras.alsoAnswers) success.content[type] = { schema: { type: 'string' } };
        }
      }
      const requestBody = operation.requestBody as { content?: Record<string, Json> } | undefined;
      const jsonBody = requestBody?.content?.['application/json'];
      if (jsonBody && extras.requestExample) jsonBody.example = extras.requestExample;
      const responses = { ...((operation.responses ?? {}) as Record<string, Json>) };
      for (const [status, response] of Object.entries(responses)) {
        if (response.description === 'Default Response') {
          responses[status] = { ...response, description: status.startsWith('2') ? 'Success' : 'Answer' };
        }
      }
      ordered.responses = {
        ...responses,
        ...errorResponses([...codesOf(method, config), ...(config.errorCodes ?? [])], envelope),
      };
      completed[methodName] = ordered;
    }
    paths[path] = completed;
  }

  const webhooks: Json = {};
  for (const [name, { when, schema }] of Object.entries(webhookPayloads)) {
    webhooks[name] = {
      post: {
        operationId: `webhook_${name.replace(/[^A-Za-z0-9]/g, '_')}`,
        summary: name,
        description: `${when} Signed with X-Commerce-Signature over "<X-Commerce-Timestamp>.<raw body>".`,
        tags: ['Webhooks'],
        security: [],
        parameters: [
          {
            in: 'header',
            name: 'X-Commerce-Signature',
            required: true,
            schema: { type: 'string' },
            description: 'sha256=<hex>[,sha256=<hex>]',
          },
          {
            in: 'header',
            name: 'X-Commerce-Timestamp',
            required: true,
            schema: { type: 'string' },
            description: 'Unix seconds',
          },
          { in: 'header', name: 'X-Commerce-Event', required: true, schema: { type: 'string' } },
          { in: 'header', name: 'X-Commerce-Delivery', required: true, schema: { type: 'string' } },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: JSON.parse(JSON.stringify(schema)) } },
        },
        responses: { '200': { description: 'Any 2xx acknowledges the delivery; anything else is retried.' } },
      },
    };
  }

  schemas.ErrorCode = {
    type: 'string',
    enum: Object.keys(errorCatalogue),
    description: 'Every error code of the API. Branch on it; messages may change.',
  };
  const hoisted = hoistTitledSchemas({ paths, webhooks }, schemas) as { paths: Json; webhooks: Json };
  const info = { ...((document.info ?? {}) as Json), description: GETTING_STARTED };
  return {
    openapi: document.openapi,
    info,
    servers: document.servers,
    security: document.security,
    tags: TAGS,
    paths: hoisted.paths,
    webhooks: hoisted.webhooks,
    components: { ...components, schemas, examples: errorExamples(paths) },
  };
}
