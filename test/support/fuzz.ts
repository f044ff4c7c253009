/**
 * A fuzzer over every route of openapi.json: fast-check arbitraries built from each route's own
 * schemas (path, query, body), bent at every level into wrong types, missing and extra fields,
 * huge and tiny numbers, long, empty, unicode, NUL and control strings, deep nesting, odd
 * headers and content types, and every kind of key. Used by test/hardening/fuzz-share.ts (a
 * CI-sized run) and `npm run bench -- fuzz` (the large one).
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { expectStatus, type TestApp } from './harness.js';
import { openApiDrift } from './openapi-check.js';

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
};

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: Schema;
}

export interface Route {
  method: string;
  path: string;
  parameters: Parameter[];
  body: Schema | undefined;
  contentTypes: string[];
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
}

/** Real ids to aim at, so requests reach past "not found" into the services. */
export interface FuzzFixtures {
  keys: string[];
  ids: Record<'intent' | 'order' | 'product' | 'endpoint' | 'delivery', string[]>;
}

export function loadRoutes(file = 'openapi.json'): Route[] {
  const document = JSON.parse(readFileSync(file, 'utf8')) as {
    paths: Record<
      string,
      Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema?: Schema }> } }>
    >;
  };
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const content = operation.requestBody?.content ?? {};
      routes.push({
        method: method.toUpperCase(),
        path,
        parameters: operation.parameters ?? [],
        body: content['application/json']?.schema,
        contentTypes: Object.keys(content),
      });
    }
  }
  return routes;
}

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0001\u0002\u001f\u007f',
  '\r\n',
  '\t',
  '%00',
  '%',
  '../../etc/passwd',
  '\\',
  "'; DROP TABLE products; --",
  '<script>alert(1)</script>',
  '=HYPERLINK("x")',
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  '😀👍🏽🇲🇷',
  '\ud800',
  'é'.repeat(300),
  'x'.repeat(10_000),
  '0000-01-01',
  '9999-12-31T23:59:59.999Z',
  '2026-02-30',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '100000000000000000000',
  'true',
  'null',
  '[]',
  '{}',
];
const NASTY_NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.5,
  -0.5,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e15,
  1e20,
  1e308,
  -1e308,
  Number.MIN_VALUE,
  1_000_000_000,
  1_000_000_001,
  100_000_000,
  100_000_001,
];

const nastyString = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_STRINGS), weight: 3 },
  // Any code point, lone surrogates included. A unit of our own rather than 'binary': fast-check
  // builds a reverse map of all 1.1M code points for that one (about 1 s per process).
  {
    arbitrary: fc.string({
      unit: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
      maxLength: 40,
    }),
    weight: 2,
  },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
);
const nastyNumber = fc.oneof(fc.constantFrom(...NASTY_NUMBERS), fc.double(), fc.integer());

/** Any JSON value, including odd ones, for a place that expects something else. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  nastyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(nastyString, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }),
);

function types(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  return schema.type ? [schema.type] : [];
}

/** A value the schema accepts (mostly), with junk mixed in at every level. */
export function valueFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema) return junk;
  const valid = validFor(schema, depth);
  return fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: junk, weight: 1 });
}

function validFor(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => valueFor(s, depth)));
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const [type] = types(schema);
  switch (type) {
    case 'string':
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      return fc.oneof(
        fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 30, 30) }),
        fc.constantFrom('https://93.184.216.34/hook', '+22220000001', '1234', 'payment.created', 'ACTIVE', 'SIZE'),
        nastyString,
      );
    case 'integer':
      return fc.oneof(
        fc.integer({
          min: Math.max(schema.minimum ?? -1_000_000, Number.MIN_SAFE_INTEGER),
          max: Math.min(schema.maximum ?? 1_000_000_000, Number.MAX_SAFE_INTEGER),
        }),
        fc.constantFrom(...NASTY_NUMBERS),
      );
    case 'number':
      return nastyNumber;
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      if (depth > 4) return fc.constant([]);
      return fc.array(valueFor(schema.items, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case 'object': {
      if (depth > 4) return fc.constant({});
      const properties = schema.properties ?? {};
      const record = fc.record(
        Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, valueFor(s, depth + 1)])),
        { requiredKeys: [] },
      );
      const extra =
        typeof schema.additionalProperties === 'object'
          ? fc.dictionary(fc.string({ maxLength: 45 }), valueFor(schema.additionalProperties, depth + 1), {
              maxKeys: 3,
            })
          : fc.oneof(
              { arbitrary: fc.constant({}), weight: 5 },
              { arbitrary: fc.dictionary(nastyString, junk, { maxKeys: 2 }), weight: 1 },
            );
      return fc.tuple(record, extra).map(([known, more]) => ({ ...more, ...known }));
    }
    default:
      return junk;
  }
}

const HUGE_BODY = `{"label":"${'x'.repeat(1_200_000)}"}`;

/** Raw bodies that are not the JSON of any value: broken, truncated, deep, huge, empty. */
const rawBody = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '',
      '{',
      '{"a":',
      'null',
      '[]',
      '"str"',
      '123',
      '{"__proto__":{"polluted":1}}',
      '{"a":1,"a":2}',
    ),
    weight: 8,
  },
  {
    arbitrary: fc.integer({ min: 1000, max: 25_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
    weight: 2,
  },
  {
    arbitrary: fc
      .integer({ min: 1000, max: 25_000 })
      .map((depth) => `{"metadata":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`),
    weight: 2,
  },
  // Past the 1 MB body limit: a few per thousand requests prove the 413; more only cost time.
  { arbitrary: fc.constant(HUGE_BODY), weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)), weight: 4 },
);

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

function multipart(content: Buffer | string, truncate: boolean): { body: Buffer; contentType: string } {
  const boundary = 'fuzzboundary0123';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\n`),
    Buffer.isBuffer(content) ? content : Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return {
    body: truncate ? body.subarray(0, Math.max(1, body.length - 20)) : body,
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

function idPool(path: string, fixtures: FuzzFixtures): string[] {
  if (path.includes('/intents/')) return fixtures.ids.intent;
  if (path.includes('/orders/')) return fixtures.ids.order;
  if (path.includes('/products/')) return fixtures.ids.product;
  if (path.includes('/endpoints/')) return fixtures.ids.endpoint;
  if (path.includes('/events/')) return fixtures.ids.delivery;
  return [];
}

/** Percent-encodes a segment; a lone surrogate becomes bytes that are not UTF-8 (%ED%A0%80). */
function encodePathSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

function queryText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** One arbitrary request for one route. */
export function requestFor(route: Route, fixtures: FuzzFixtures): fc.Arbitrary<FuzzRequest> {
  const pathParams = route.parameters.filter((p) => p.in === 'path');
  const queryParams = route.parameters.filter((p) => p.in === 'query');
  const pool = idPool(route.path, fixtures);
  const pathValue = fc.oneof(
    { arbitrary: pool.length ? fc.constantFrom(...pool) : fc.constant('none'), weight: 4 },
    { arbitrary: nastyString.filter((s) => s.length > 0), weight: 1 },
  );
  const query = fc.record(Object.fromEntries(queryParams.map((p) => [p.name, valueFor(p.schema).map(queryText)])), {
    requiredKeys: [],
  });
  const extraQuery = fc.option(fc.tuple(nastyString, nastyString), { freq: 8 });
  const key = fc.oneof(
    { arbitrary: fc.constantFrom(...fixtures.keys), weight: 8 },
    { arbitrary: fc.constantFrom('', 'sk_test_', 'sk_live_nope', 'pk_test_' + 'x'.repeat(40), 'Basic abc'), weight: 1 },
  );
  const isWrite = route.method !== 'GET';
  const body: fc.Arbitrary<{ body: string | Buffer | undefined; contentType: string | undefined }> =
    route.contentTypes.includes('multipart/form-data')
      ? fc
          .tuple(
            fc.oneof(
              fc.constant(PNG),
              fc.constant('externalId,name,price\nFZ-1,Fuzz,100\n'),
              fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
            ),
            fc.boolean(),
            fc.constantFrom('multipart', 'csv', 'json', 'none'),
          )
          .map(([content, truncate, kind]) => {
            if (kind === 'csv') return { body: String(content), contentType: 'text/csv' };
            if (kind === 'json') return { body: '{}', contentType: 'application/json' };
            if (kind === 'none') return { body: undefined, contentType: undefined };
            return multipart(content, truncate);
          })
      : isWrite
        ? fc.oneof(
            {
              arbitrary: valueFor(route.body).map((value) => ({
                body: JSON.stringify(value) ?? 'null',
                contentType: 'application/json',
              })),
              weight: 8,
            },
            { arbitrary: rawBody.map((raw) => ({ body: raw, contentType: 'application/json' })), weight: 1 },
            {
              arbitrary: fc
                .tuple(
                  valueFor(route.body),
                  fc.constantFrom(
                    'text/plain',
                    'application/xml',
                    'application/json; charset=latin1',
                    'multipart/form-data',
                    'application/x-www-form-urlencoded',
                    'application/JSON',
                  ),
                )
                .map(([value, contentType]) => ({ body: JSON.stringify(value) ?? '', contentType })),
              weight: 1,
            },
            { arbitrary: fc.constant({ body: undefined, contentType: undefined }), weight: 1 },
          )
        : fc.constant({ body: undefined, contentType: undefined });
  const idempotency = fc.oneof(
    { arbitrary: fc.uuid(), weight: 6 },
    { arbitrary: fc.constantFrom('fuzz-reused-key', 'x'.repeat(300), ''), weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );
  return fc
    .record({
      params: fc.tuple(...pathParams.map(() => pathValue)),
      query,
      extraQuery,
      key,
      body,
      idempotency,
      accept: fc.constantFrom(undefined, 'text/html', '*/*', 'application/xml'),
    })
    .map(({ params, query: q, extraQuery: eq, key: k, body: b, idempotency: idem, accept }) => {
      let path = route.path;
      pathParams.forEach((p, i) => {
        path = path.replace(`{${p.name}}`, encodePathSegment(params[i] as string));
      });
      const search = new URLSearchParams(q as Record<string, string>);
      if (eq) search.append(eq[0], eq[1]);
      const queryString = search.toString();
      const headers: Record<string, string> = {};
      if (k) headers.authorization = k.startsWith('Basic') ? k : `Bearer ${k}`;
      if (b.contentType) headers['content-type'] = b.contentType;
      if (isWrite && idem !== undefined) headers['x-idempotency-key'] = idem;
      if (accept) headers.accept = accept;
      return {
        method: route.method,
        url: `${path}${queryString ? `?${queryString}` : ''}`,
        headers,
        body: b.body,
      };
    });
}

export interface FuzzReport {
  sent: number;
  byStatus: Map<number, number>;
  failures: { request: FuzzRequest; status: number; text: string; drift?: string }[];
  elapsedMs: number;
}

/** An answer to a generated request; status 0 when the request failed on the way. */
interface FuzzAnswer {
  status: number;
  contentType: string | null;
  text: string;
}

/** How a generated request reaches the app: its answer, or undefined when it could not be sent. */
type Sender = (request: FuzzRequest) => Promise<FuzzAnswer | undefined>;

/** Over real HTTP (undici's fetch), through Node's own HTTP parser. */
function httpSender(baseUrl: string): Sender {
  return async (request) => {
    try {
      const response = await fetch(`${baseUrl}${request.url}`, {
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
      });
      return {
        status: response.status,
        contentType: response.headers.get('content-type'),
        text: await response.text(),
      };
    } catch (error) {
      // fetch refuses some header values (non-Latin-1) before sending: nothing reached the server.
      if (error instanceof TypeError && /header|ByteString/i.test(String(error.message) + String(error.cause))) {
        return undefined;
      }
      return { status: 0, contentType: null, text: String(error) };
    }
  };
}

/** In process (Fastify's inject): the same routing, hooks, parsers and handlers, with no socket. */
function injectSender(app: TestApp['app']): Sender {
  return async (request) => {
    try {
      const response = await app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: request.headers,
        ...(request.body !== undefined ? { payload: request.body } : {}),
      });
      const contentType = response.headers['content-type'];
      return {
        status: response.statusCode,
        contentType: contentType === undefined ? null : String(contentType),
        text: response.body,
      };
    } catch (error) {
      return { status: 0, contentType: null, text: String(error) };
    }
  };
}

/** Header values Node's HTTP parser accepts as they are: tab, printable ASCII and Latin-1. */
const PLAIN_HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Where the fuzzer sends: most requests in process (about 2x cheaper per request than over a
 * socket, measured), and over real HTTP every request whose headers only Node's HTTP parser may
 * judge (control characters, non-Latin-1) plus every `httpShare`-th request, so the parser's own
 * refusals and the socket path stay fuzzed too.
 */
export function fuzzTarget(t: Pick<TestApp, 'app' | 'baseUrl'>, httpShare = 8): Sender {
  const overHttp = httpSender(t.baseUrl);
  const inProcess = injectSender(t.app);
  let sent = 0;
  return (request) => {
    const plain = Object.values(request.headers).every((value) => PLAIN_HEADER_VALUE.test(value));
    return !plain || sent++ % httpShare === 0 ? overHttp(request) : inProcess(request);
  };
}

/** Sends `count` generated requests (seeded: the same seed sends the same requests). */
export async function fuzz(
  send: Sender,
  fixtures: FuzzFixtures,
  options: { count: number; seed: number; concurrency?: number },
): Promise<FuzzReport> {
  const routes = loadRoutes();
  const anyRequest = fc.oneof(...routes.map((route) => requestFor(route, fixtures)));
  const report: FuzzReport = { sent: 0, byStatus: new Map(), failures: [], elapsedMs: 0 };
  const started = Date.now();
  const batchSize = 500;
  let produced = 0;
  let batchIndex = 0;
  while (produced < options.count) {
    const size = Math.min(batchSize, options.count - produced);
    const batch = fc.sample(anyRequest, { numRuns: size, seed: options.seed + batchIndex++ });
    produced += size;
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const request = batch[next++]!;
        const answer = await send(request);
        if (!answer) continue;
        const { status, text } = answer;
        report.sent += 1;
        report.byStatus.set(status, (report.byStatus.get(status) ?? 0) + 1);
        const envelopeBroken = status >= 400 && !text.startsWith('{"success":false');
        // Even a request the fuzzer bent out of shape gets an answer openapi.json documents.
        const drift = status === 0 ? undefined : openApiDrift({ method: request.method, url: request.url, ...answer });
        if (status >= 500 || status === 0 || envelopeBroken || drift) {
          if (report.failures.length < 5) {
            const shown = {
              ...request,
              url: request.url.slice(0, 300),
              body: request.body === undefined ? undefined : String(request.body).slice(0, 300),
            };
            report.failures.push({ request: shown, status, text: text.slice(0, 300), ...(drift ? { drift } : {}) });
          }
        }
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  }
  report.elapsedMs = Date.now() - started;
  return report;
}

/** A business with data of every kind to aim at, and every kind of key. */
export async function fuzzFixtures(t: TestApp): Promise<FuzzFixtures> {
  const business = await t.createBusiness({ name: 'Fuzz' });
  const { secretTest: sk, secretLive, publishableTest, publishableLive } = business.keys;
  const suspended = await t.admin('POST', '/keys', { businessId: business.id, kind: 'secret', environment: 'test' });
  expectStatus(suspended, 201);
  expectStatus(await t.admin('POST', `/keys/${suspended.body.data.id}/suspend`), 200);
  const scoped = await t.admin('POST', '/keys', {
    businessId: business.id,
    kind: 'secret',
    environment: 'test',
    scopes: ['intents:read'],
  });
  const stranger = await t.createBusiness({ name: 'Stranger' });
  const write = (path: string, body: unknown, key = sk) =>
    t.request('POST', `/api/v1/dev${path}`, { key, body, idempotencyKey: true });
  const ids: FuzzFixtures['ids'] = { intent: [], order: [], product: [], endpoint: [], delivery: [] };
  for (let i = 0; i < 3; i++) {
    const intent = await write('/intents', { amount: 1000 + i, label: `Fuzz ${i}` });
    ids.intent.push(intent.body.data.referenceNumber);
    const product = await write('/store/products', {
      name: `Fuzz ${i}`,
      price: 500,
      quantity: 50,
      externalId: `FUZZ-${i}`,
      status: 'ACTIVE',
      variants: [{ type: 'SIZE', label: 'L', priceAdjustment: 100, quantity: 10 }],
    });
    ids.product.push(product.body.data.id, `FUZZ-${i}`);
    const order = await write('/store/orders/simulate', {
      items: [{ productId: product.body.data.id, quantity: 1 }],
      customerName: 'Fuzz',
    });
    ids.order.push(order.body.data.referenceNumber);
  }
  const endpoint = await write('/webhooks/endpoints', {
    url: 'https://93.184.216.34/hook',
    events: ['payment.created'],
  });
  ids.endpoint.push(endpoint.body.data.id);
  const deliveries = await t.request('GET', '/api/v1/dev/webhooks/events', { key: sk });
  ids.delivery.push(...deliveries.body.data.items.map((d: { id: string }) => d.id));
  const foreign = await write('/intents', { amount: 700 }, stranger.keys.secretTest);
  ids.intent.push(foreign.body.data.referenceNumber);
  return {
    keys: [
      sk,
      sk,
      sk,
      publishableTest,
      secretLive,
      publishableLive,
      suspended.body.data.key,
      scoped.body.data.key,
      stranger.keys.secretTest,
    ],
    ids,
  };
}
