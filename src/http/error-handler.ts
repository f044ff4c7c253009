import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorDetail } from './errors.js';

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldOf(context: string | undefined, issue: ValidationIssue): string {
  const location = context === 'querystring' ? 'query' : (context ?? 'body');
  const path = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const missing = issue.params?.requiredProperties ?? issue.params?.missingProperty;
  const extra = issue.params?.additionalProperties ?? issue.params?.additionalProperty;
  const named = Array.isArray(missing) ? missing[0] : (missing ?? (Array.isArray(extra) ? extra[0] : extra));
  const parts = [location, path, typeof named === 'string' ? named : ''].filter(Boolean);
  return parts.join('.');
}

function messageOf(issue: ValidationIssue): string {
  const extra = issue.params?.additionalProperties ?? issue.params?.additionalProperty;
  if (extra !== undefined) return 'unknown field';
  return issue.message ?? 'is invalid';
}

/** Turns any error into the error envelope. Only unexpected errors are logged with a stack. */
export function toApiError(error: FastifyError | Error, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const details: ErrorDetail[] = fastifyError.validation.map((issue) => ({
      field: fieldOf(fastifyError.validationContext, issue as ValidationIssue),
      message: messageOf(issue as ValidationIssue),
    }));
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
      return new ApiError('UNSUPPORTED_MEDIA_TYPE');
    default:
      break;
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) return new ApiError('INVALID_JSON');
  if (fastifyError.statusCode === 413) return new ApiError('PAYLOAD_TOO_LARGE');
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new ApiError('VALIDATION_ERROR', fastifyError.message);
  }
  request.log.error({ err: error }, 'unhandled error');
  return new ApiError('INTERNAL_ERROR');
}

export function sendError(error: ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).send({
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
