import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import pino from 'pino';
import { randomBase62 } from '../lib/ids.js';
import { ApiError, type ErrorDetail } from './errors.js';
import { mediaTypesOf } from './media-types.js';

interface DatabaseErrorFields {
  code: string;
  severity?: string;
  constraint?: string;
  table?: string;
  column?: string;
  routine?: string;
  query?: string;
  stack?: string;
}

/** A pg or PGlite error: a SQLSTATE code plus the server's fields. */
function isDatabaseError(error: unknown): error is Error & DatabaseErrorFields {
  if (!(error instanceof Error)) return false;
  const { code, severity, routine } = error as Partial<DatabaseErrorFields>;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && (severity !== undefined || routine !== undefined);
}

/** `INSERT INTO wallets`, `UPDATE idempotency_keys`, `SELECT FROM events`: what ran, never with what. */
function statementName(query: string | undefined): string | undefined {
  if (!query) return undefined;
  const verb = /^\s*(?:with\b[\s\S]*?\)\s*)?(select|insert|update|delete|lock)\b/i.exec(query)?.[1]?.toUpperCase();
  const table = /\b(?:into|update|from|table)\s+"?([a-z_][a-z0-9_]*)"?/i.exec(query)?.[1];
  return verb ? `${verb}${table ? ` ${table}` : ''}` : undefined;
}

/**
 * The `err` serializer of every logger. A database error's message, detail, `where` and (on
 * PGlite) `params` carry the values of the statement (a webhook secret, a phone, a key): only the
 * SQLSTATE, the statement's name, the constraint and the call stack are logged.
 */
export function serializeLoggedError(error: unknown): unknown {
  if (isDatabaseError(error)) {
    const { code, severity, constraint, table, column, routine } = error;
    return {
      type: 'DatabaseError',
      code,
      severity,
      statement: statementName(error.query),
      constraint,
      table,
      column,
      routine,
      stack: error.stack?.split('\n').slice(1).join('\n'),
    };
  }
  return error instanceof Error ? pino.stdSerializers.err(error) : error;
}

interface ValidationIssue {
  keyword?: string;
  schemaPath?: string;
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function namesIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  return typeof value === 'string' ? [value] : [];
}

/** One detail per offending field, named like `body.metadata.color` or `query.limit`. */
function detailsOf(context: string | undefined, issue: ValidationIssue): ErrorDetail[] {
  // TypeBox reports an unknown property twice; the `additionalProperties` issue names it.
  if (issue.keyword === 'boolean' && issue.schemaPath?.endsWith('/additionalProperties')) return [];
  const location = context === 'querystring' ? 'query' : (context ?? 'body');
  const base = [location, ...(issue.instancePath ?? '').split('/').filter(Boolean)].join('.');
  const missing = namesIn(issue.params?.requiredProperties ?? issue.params?.missingProperty);
  if (missing.length > 0) return missing.map((name) => ({ field: `${base}.${name}`, message: 'is required' }));
  const unknown = namesIn(issue.params?.additionalProperties ?? issue.params?.additionalProperty);
  if (unknown.length > 0) return unknown.map((name) => ({ field: `${base}.${name}`, message: 'unknown field' }));
  return [{ field: base, message: issue.message ?? 'is invalid' }];
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * The database went away (stopped, restarting, unreachable, failing over): a 503 the client may
 * retry, not a 500. SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown, cannot
 * connect now), the socket errors of the driver, pg's own "Connection terminated", and 25006
 * (read-only transaction): a connection that reached a server while it is not the primary, a
 * former primary during a switchover, before the proxy in front of the members cuts it.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (NETWORK_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code) || code === '25006')
  )
    return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(error.message);
}

/** Turns any error into the error envelope. Only unexpected errors are logged with a stack. */
export function toApiError(error: FastifyError | Error, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const details: ErrorDetail[] = fastifyError.validation.flatMap((issue) =>
      detailsOf(fastifyError.validationContext, issue as ValidationIssue),
    );
    const unique = details.filter(
      (detail, index) => details.findIndex((d) => d.field === detail.field && d.message === detail.message) === index,
    );
    return new ApiError('VALIDATION_ERROR', `Invalid request: ${unique[0]?.field} ${unique[0]?.message}`, unique);
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('INVALID_JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        'UNSUPPORTED_MEDIA_TYPE',
        `This endpoint takes a body of Content-Type ${mediaTypesOf(request.routeOptions.schema).join(' or ')} only.`,
      );
    default:
      break;
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) return new ApiError('INVALID_JSON');
  if (fastifyError.statusCode === 413) return new ApiError('PAYLOAD_TOO_LARGE');
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new ApiError('VALIDATION_ERROR', fastifyError.message);
  }
  if (isConnectionLoss(error)) {
    request.log.warn({ err: serializeLoggedError(error) }, 'database unavailable');
    return new ApiError('DATABASE_UNAVAILABLE');
  }
  // A data exception from the database (class 22: a value out of range, a date PostgreSQL cannot
  // hold, bad text) comes from a value in the request the schemas let through; the statement
  // failed, so nothing was written.
  const sqlState = (error as { code?: unknown }).code;
  if (typeof sqlState === 'string' && /^22[0-9A-Z]{3}$/.test(sqlState)) {
    request.log.warn({ sqlState }, 'database refused a value from the request');
    return new ApiError('VALIDATION_ERROR', 'A value in the request is out of range or malformed.');
  }
  request.log.error({ err: serializeLoggedError(error) }, 'unhandled error');
  return new ApiError('INTERNAL_ERROR');
}

/**
 * Fastify's `frameworkErrors`: what the router refuses before any route or hook runs (a path
 * that is not valid percent-encoded UTF-8, a path segment past the router's length limit) is
 * answered in the envelope like any other bad request.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-Id', String(request.id));
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'A path segment of this URL is too long.'
      : 'The URL is not valid (bad percent-encoding or characters).';
  void sendError(
    new ApiError('VALIDATION_ERROR', message, [{ field: 'path', message: 'is not valid' }]),
    request,
    reply,
  );
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes before any request existed
 * (headers past the size limit, a malformed request line). The client still gets the envelope.
 */
export function handleClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({
    success: false,
    error: {
      code: 'VALIDATION_ERROR',
      message:
        error.code === 'HPE_HEADER_OVERFLOW'
          ? 'The request line and headers are too large.'
          : 'The request could not be read as HTTP.',
      statusCode: 400,
      requestId: `req_${randomBase62(20)}`,
    },
  });
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The error envelope as sent, so an idempotent write can store exactly what it answers. */
export function errorBody(error: ApiError, request: FastifyRequest): string {
  return JSON.stringify({
    success: false,
    error: {
      code: error.code,
      message: error.message,
      statusCode: error.status,
      requestId: String(request.id),
      ...(error.details ? { details: error.details } : {}),
    },
  });
}

export function sendError(error: ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  reply.header('Cache-Control', 'no-store');
  return reply.code(error.status).type('application/json; charset=utf-8').send(errorBody(error, request));
}
