import { errorCodes, type FastifyInstance, type FastifySchema, type preParsingHookHandler } from 'fastify';

/** What a route takes when its schema names nothing else. */
export const JSON_MEDIA_TYPE = 'application/json';

/** The methods whose body Fastify reads. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The media types a route's body may have: those its schema names in `consumes` (which the
 * OpenAPI document shows too), else JSON alone.
 */
export function mediaTypesOf(schema: FastifySchema | undefined): readonly string[] {
  const consumes = (schema as { consumes?: readonly string[] } | undefined)?.consumes;
  return consumes && consumes.length > 0 ? consumes : [JSON_MEDIA_TYPE];
}

/** `application/json; charset=utf-8` → `application/json`. */
function essenceOf(contentType: string): string {
  return contentType.split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * decisions.md: a body whose Content-Type the route does not take is 415 UNSUPPORTED_MEDIA_TYPE.
 * Fastify refuses only the types no parser of the route's scope reads, and text/plain has a parser
 * everywhere (so a text body on a JSON route was a 400 about its fields), as the CSV and
 * multipart parsers have on every route of the products module. Each route therefore checks the
 * type against its own list before its body is read, after authentication (a refused key learns
 * nothing about its body). A request without a Content-Type passes this step: without a body it
 * is a bodiless action; with one, Fastify finds no parser for it and refuses it with the same 415.
 * The refusal is Fastify's own error, so, like an unparseable body, it is never kept under an
 * idempotency key. Routes under `formPrefixes` (the dashboard's HTML forms) take their forms as
 * their plugins' parsers allow.
 */
export function requireDeclaredMediaTypes(app: FastifyInstance, formPrefixes: readonly string[]): void {
  app.addHook('onRoute', (route) => {
    if (formPrefixes.some((prefix) => route.url === prefix || route.url.startsWith(`${prefix}/`))) return;
    if (![route.method].flat().some((method) => BODY_METHODS.has(method.toUpperCase()))) return;
    const accepted = new Set(mediaTypesOf(route.schema));
    const checkMediaType: preParsingHookHandler = (request, _reply, payload, done) => {
      const contentType = request.headers['content-type'];
      if (contentType === undefined || accepted.has(essenceOf(contentType))) {
        done(null, payload);
        return;
      }
      done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(essenceOf(contentType)));
    };
    const own = route.preParsing === undefined ? [] : [route.preParsing].flat();
    route.preParsing = [checkMediaType, ...own];
  });
}
