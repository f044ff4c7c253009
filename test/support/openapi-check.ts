/**
 * Every response a test receives from a documented operation is checked against openapi.json
 * (issue 36: "no drift possible"): its status is one the operation documents, its media type one
 * that status documents, and a JSON body validates against that status's schema. The error
 * answers' schemas narrow `error.code` to the operation's codes, so a code the operation does not
 * list fails the schema too. Paths the document does not name (dashboard, checkout pages, admin,
 * health, unknown routes) and methods it does not document there (CORS preflights, HEAD) are not
 * checked: there is no contract to hold them to.
 */
import { readFileSync } from 'node:fs';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** What a test received, enough to hold it to the document. */
export interface ObservedResponse {
  method: string;
  /** The request's path, with or without a query string. */
  url: string;
  status: number;
  contentType: string | null;
  text: string;
}

interface MediaType {
  schema?: unknown;
}

interface DocumentedResponse {
  content?: Record<string, MediaType>;
}

interface Operation {
  responses?: Record<string, DocumentedResponse>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}

interface PathTemplate {
  template: string;
  pattern: RegExp;
  /** One entry per segment, 0 for a literal and 1 for a parameter: the router prefers literals. */
  rank: number[];
  operations: Map<string, Operation>;
}

/** The document as the checks need it, built once per process on first use. */
interface LoadedDocument {
  templates: PathTemplate[];
  ajv: InstanceType<typeof Ajv2020.default>;
  /** By `METHOD template status`, and by the schema's text (see validatorFor). */
  validators: Map<string, ValidateFunction>;
}

const DOCUMENT_FILE = 'openapi.json';
/** The id the component schemas are registered under; the document's refs are pointed at it. */
const COMPONENTS_ID = 'openapi-components';
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

let loaded: LoadedDocument | undefined;

/** `#/components/schemas/X` becomes `openapi-components#/$defs/X`, everywhere in a schema's text. */
function refsToComponents(schemaText: string): string {
  return schemaText.replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`);
}

function templateOf(template: string, operations: Record<string, Operation>): PathTemplate {
  const segments = template.split('/').filter(Boolean);
  const source = segments
    .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('/');
  return {
    template,
    // The app's router ignores a trailing slash.
    pattern: new RegExp(`^/${source}/?$`),
    rank: segments.map((segment) => (segment.startsWith('{') ? 1 : 0)),
    operations: new Map(
      Object.entries(operations)
        .filter(([method]) => HTTP_METHODS.has(method))
        .map(([method, operation]) => [method.toUpperCase(), operation]),
    ),
  };
}

function load(): LoadedDocument {
  if (loaded) return loaded;
  const document = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as OpenApiDocument;
  // allErrors: a drift report names every mismatch of the body, not the first one only.
  const ajv = new Ajv2020.default({ allErrors: true });
  addFormats.default(ajv);
  const components = refsToComponents(JSON.stringify(document.components?.schemas ?? {}));
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: JSON.parse(components) as Record<string, object> });
  loaded = {
    templates: Object.entries(document.paths).map(([template, operations]) => templateOf(template, operations)),
    ajv,
    validators: new Map(),
  };
  return loaded;
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** The documented template a request reached, as the router picks it: literal segments first. */
function operationFor(method: string, path: string): { template: string; operation: Operation } | undefined {
  let best: PathTemplate | undefined;
  for (const candidate of load().templates) {
    if (!candidate.operations.has(method) || !candidate.pattern.test(path)) continue;
    if (!best || compareRanks(candidate.rank, best.rank) < 0) best = candidate;
  }
  return best && { template: best.template, operation: best.operations.get(method)! };
}

/**
 * The validator of one operation's status, compiled on first use. Most error answers of different
 * operations carry the same schema (the same codes for 401, 429, 500...): one compiled validator
 * serves them all, which keeps a process that meets every operation (the fuzzer) from compiling
 * hundreds.
 */
function validatorFor(operationStatus: string, schema: unknown): ValidateFunction {
  const { ajv, validators } = load();
  const known = validators.get(operationStatus);
  if (known) return known;
  const source = refsToComponents(JSON.stringify(schema));
  const validate = validators.get(source) ?? ajv.compile(JSON.parse(source) as object);
  validators.set(source, validate);
  validators.set(operationStatus, validate);
  return validate;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map(
      (error) => `${error.instancePath || '(body)'} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
    )
    .join('; ');
}

function errorCodeOf(body: unknown): string | undefined {
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Why a response does not match the document, or undefined when it does (or when the document
 * says nothing of its method and path).
 */
export function openApiDrift(response: ObservedResponse): string | undefined {
  const method = response.method.toUpperCase();
  const path = response.url.split('?')[0]!;
  const found = operationFor(method, path);
  if (!found) return undefined;
  const { template, operation } = found;
  let body: unknown;
  try {
    body = response.text ? (JSON.parse(response.text) as unknown) : undefined;
  } catch {
    body = undefined;
  }
  const code = errorCodeOf(body);
  const answered = `${method} ${template} answered ${response.status}${code ? ` ${code}` : ''}`;
  const documented = operation.responses?.[String(response.status)];
  if (!documented) {
    const statuses = Object.keys(operation.responses ?? {}).join(', ');
    return `${answered}, a status the operation does not document (documented: ${statuses}): ${response.text.slice(0, 300)}`;
  }
  const content = documented.content ?? {};
  const mediaType = response.contentType?.split(';')[0]!.trim().toLowerCase() || undefined;
  if (!mediaType) {
    return Object.keys(content).length === 0 || response.text === ''
      ? undefined
      : `${answered} without a Content-Type; documented: ${Object.keys(content).join(', ')}`;
  }
  const media = content[mediaType];
  if (!media) {
    return `${answered} as ${mediaType}, not documented for this status (documented: ${Object.keys(content).join(', ') || 'no body'})`;
  }
  if (mediaType !== 'application/json' || media.schema === undefined) return undefined;
  if (body === undefined) return `${answered} as JSON, but the body is not JSON: ${response.text.slice(0, 300)}`;
  const validate = validatorFor(`${method} ${template} ${response.status}`, media.schema);
  if (validate(body)) return undefined;
  return `${answered}, a body that does not match the documented schema: ${describeErrors(validate.errors)}; body: ${response.text.slice(0, 500)}`;
}

/** The drifts seen per app origin, until the app's test harness takes them when it closes. */
const driftsByOrigin = new Map<string, string[]>();

/** Checks a response of the app at `origin`, remembers a drift for takeDrifts, and returns it. */
export function checkResponse(origin: string, response: ObservedResponse): string | undefined {
  const drift = openApiDrift(response);
  if (drift) driftsByOrigin.set(origin, [...(driftsByOrigin.get(origin) ?? []), drift]);
  return drift;
}

/** The drifts seen from the app at `origin` so far, forgotten once taken. */
export function takeDrifts(origin: string): string[] {
  const drifts = driftsByOrigin.get(origin) ?? [];
  driftsByOrigin.delete(origin);
  return drifts;
}

/**
 * A fetch for the SDK's `fetch` option that checks every answer. It cannot fail the call (the SDK
 * would take the failure for a network error and retry): the drift waits for takeDrifts.
 */
export const checkedFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const url = new URL(input instanceof Request ? input.url : input);
  checkResponse(url.origin, {
    method: init?.method ?? (input instanceof Request ? input.method : 'GET'),
    url: url.pathname,
    status: response.status,
    contentType: response.headers.get('content-type'),
    text: await response.clone().text(),
  });
  return response;
};
