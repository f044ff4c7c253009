import type { FastifyInstance, FastifySchemaCompiler, preHandlerHookHandler } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { walletPhone } from '../lib/phone.js';
import { invalid } from './errors.js';
import { compileOnFirstUse } from './schema-compilers.js';
import { isDateFilter, parseDateRange } from './schemas.js';

const INTEGER_TEXT = /^-?[0-9]+$/;
const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;

/**
 * Query strings and path parameters arrive as text. TypeBox's own conversion is lenient
 * ("1.5" becomes 1, "true" becomes 1, "0x10" becomes 16); here only plain decimal text becomes a
 * number and only "true"/"false" a boolean, so anything else fails validation with a clear error.
 */
function convertText(schema: TSchema, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const type = (schema as { type?: unknown }).type;
  // Past 2^53 a number is no longer exact (?page=100000000000000000000): left as text, it fails.
  if (type === 'integer' && INTEGER_TEXT.test(value))
    return Number.isSafeInteger(Number(value)) ? Number(value) : value;
  if (type === 'number' && NUMBER_TEXT.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

function convertObject(schema: TSchema, value: unknown): unknown {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties;
  if (!properties || value === null || typeof value !== 'object') return value;
  const converted: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [name, property] of Object.entries(properties)) {
    if (name in converted) converted[name] = convertText(property, converted[name]);
  }
  return converted;
}

/**
 * The path (`/metadata/a`) of the first string or property name holding a NUL character, if any.
 * PostgreSQL cannot store NUL in text or jsonb, and no field of the API has a use for it. Walks
 * with its own stack: a body nested 20,000 deep must not overflow the call stack.
 */
export function findNul(root: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value: root, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path;
    } else if (value !== null && typeof value === 'object') {
      for (const [name, child] of Object.entries(value)) {
        const childPath = `${path}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        if (name.includes('\u0000')) return childPath;
        stack.push({ value: child, path: childPath });
      }
    }
  }
  return undefined;
}

/**
 * Fastify validator: TypeBox's compiled checks, with strict text conversion outside the body.
 * Compiled on the route's first request unless `eager` (schema-compilers.ts says why).
 */
export function strictValidatorCompiler(eager: boolean): FastifySchemaCompiler<TSchema> {
  return ({ schema, httpPart }) =>
    compileOnFirstUse(() => {
      const check = Compile(schema);
      return (value: unknown) => {
        const converted = httpPart === 'body' ? value : convertObject(schema, value);
        const nulAt = findNul(converted);
        const valid = check.Check(converted);
        if (nulAt === undefined && valid) return { value: converted };
        // The NUL beside the schema's own problems: a batch names every bad item in one answer.
        const nul =
          nulAt === undefined
            ? []
            : [
                {
                  keyword: 'nul',
                  schemaPath: '#',
                  instancePath: nulAt.split('\u0000').join('\\0'),
                  message: 'must not contain NUL characters',
                },
              ];
        return { error: [...nul, ...(valid ? [] : check.Errors(converted))] as never };
      };
    }, eager);
}

const NO_QUERY = Type.Object({}, { additionalProperties: false });

/**
 * One rule for query strings on the Developer API (routes under `base`): a parameter the route
 * does not name is refused (400 VALIDATION_ERROR), on a list as on a get-by-id, `GET /balance` or
 * an export. A route without a querystring schema gets an empty strict one here, so none can
 * forget; a route with one must make it strict, or the app refuses to start. Pages, checkout and
 * the storefront live outside the base and keep the query strings browsers add.
 */
export function strictDeveloperQueries(app: FastifyInstance, base: string): void {
  app.addHook('onRoute', (route) => {
    if (route.url !== base && !route.url.startsWith(`${base}/`)) return;
    const querystring = route.schema?.querystring as { additionalProperties?: unknown } | undefined;
    if (querystring === undefined) {
      route.schema = { ...route.schema, querystring: NO_QUERY };
    } else if (querystring.additionalProperties !== false) {
      throw new Error(`${String(route.method)} ${route.url}: its querystring schema refuses unknown parameters`);
    }
  });
}

/**
 * One rule for the date filters of the Developer API: every route whose query names both `from`
 * and `to` as date filters (lists and exports) refuses `from` after `to` with 400
 * VALIDATION_ERROR before its handler runs, so no list can forget it. Statements take whole days
 * of their own form and answer STATEMENT_PERIOD_INVALID.
 */
export function checkDateRanges(app: FastifyInstance, base: string): void {
  app.addHook('onRoute', (route) => {
    if (route.url !== base && !route.url.startsWith(`${base}/`)) return;
    const properties = (route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties;
    if (!isDateFilter(properties?.from) || !isDateFilter(properties?.to)) return;
    const checkRange: preHandlerHookHandler = (request, _reply, done) => {
      try {
        parseDateRange(request.query as { from?: string; to?: string });
        done();
      } catch (error) {
        done(error as Error);
      }
    };
    const own = route.preHandler === undefined ? [] : [route.preHandler].flat();
    route.preHandler = [checkRange, ...own];
  });
}

/**
 * A route's `preValidation` step for a body with a wallet `phone`: a phone typed nationally is
 * replaced by its E.164 form before the body's schema is checked, so everything after it (the PIN
 * check, the per-wallet limit, an idempotency key's fingerprint) sees one spelling of a wallet. A
 * phone that reads as none is refused here (VALIDATION_ERROR on `body.phone`): the schema's
 * pattern also takes 8 digits, as the document promises, and must not let unreadable ones through.
 */
export async function readWalletPhoneOfBody(request: { body: unknown }): Promise<void> {
  const body = request.body;
  if (typeof body !== 'object' || body === null || !('phone' in body) || typeof body.phone !== 'string') return;
  const phone = walletPhone(body.phone);
  if (phone === undefined) {
    throw invalid('body.phone', 'is not a wallet phone: + and the country code, or 8 Mauritanian digits');
  }
  (body as { phone: string }).phone = phone;
}
