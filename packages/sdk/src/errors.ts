import type { components } from './generated/openapi.js';

/** Every code the API answers (from the OpenAPI document), plus the client's own. */
export type ApiErrorCode = components['schemas']['ErrorCode'];
export type ErrorCode = ApiErrorCode | 'CONNECTION_ERROR' | 'TIMEOUT' | 'UNEXPECTED_RESPONSE';

export interface ErrorDetail {
  field: string;
  message: string;
}

export interface CommerceErrorInit {
  code: ErrorCode;
  message: string;
  statusCode?: number | undefined;
  requestId?: string | undefined;
  details?: ErrorDetail[] | undefined;
  retryAfterSeconds?: number | undefined;
  cause?: unknown;
}

/** An error of the API or of reaching it. Branch on `code` or on the subclass. */
export class CommerceError extends Error {
  readonly code: ErrorCode;
  /** The HTTP status; undefined when no answer came (connection errors, time-outs). */
  readonly statusCode: number | undefined;
  readonly requestId: string | undefined;
  readonly details: ErrorDetail[];
  /** Seconds the server asked to wait (429 Retry-After). */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: CommerceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.statusCode = init.statusCode;
    this.requestId = init.requestId;
    this.details = init.details ?? [];
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** 401: no key, a malformed header, an unknown or rotated key. */
export class AuthenticationError extends CommerceError {}
/** 403: the key may not do this (scope, secret key, sandbox, live approval, IP, suspended). */
export class PermissionError extends CommerceError {}
/** 400, 402, 413, 415, 422: the request cannot be done as sent. */
export class InvalidRequestError extends CommerceError {}
/** 404: no such resource (or of another business). */
export class NotFoundError extends CommerceError {}
/** 409: a conflict (idempotency key in progress, externalId taken, endpoint inactive). */
export class ConflictError extends CommerceError {}
/** 429: too many requests; `retryAfterSeconds` says how long to wait. */
export class RateLimitError extends CommerceError {}
/** 5xx or an answer that is not the API's. */
export class ApiError extends CommerceError {}
/** No answer: the connection failed or timed out. */
export class ConnectionError extends CommerceError {}

/** The error for an answer of the API. */
export function errorFromResponse(init: CommerceErrorInit & { statusCode: number }): CommerceError {
  const status = init.statusCode;
  if (status === 401) return new AuthenticationError(init);
  if (status === 403) return new PermissionError(init);
  if (status === 404) return new NotFoundError(init);
  if (status === 409) return new ConflictError(init);
  if (status === 429) return new RateLimitError(init);
  if (status >= 400 && status < 500) return new InvalidRequestError(init);
  return new ApiError(init);
}

/** Why a webhook was refused by `commerce.webhooks.verify`. */
export type WebhookVerificationReason =
  | 'NO_SIGNATURE_HEADER'
  | 'NO_TIMESTAMP_HEADER'
  | 'MALFORMED_TIMESTAMP'
  | 'TIMESTAMP_OUTSIDE_TOLERANCE'
  | 'NO_MATCHING_SIGNATURE'
  | 'INVALID_PAYLOAD'
  | 'INVALID_SECRET';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}
