import type { components } from './generated/openapi.js';

/** Every code the API answers (from the OpenAPI document). */
export type ApiErrorCode = components['schemas']['ErrorCode'];

/** Codes of the errors the SDK raises itself, when no answer of the API explains the failure. */
export type ClientErrorCode =
  | 'CONNECTION_ERROR'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'UNEXPECTED_RESPONSE'
  | 'INVALID_API_KEY_FORMAT'
  | 'TEST_KEY_REQUIRED'
  | 'LISTEN_CONFIG_UNREADABLE';

/** Why `verifyWebhook` refused a delivery. */
export type WebhookVerificationCode =
  | 'NO_SIGNATURE_HEADER'
  | 'NO_TIMESTAMP_HEADER'
  | 'MALFORMED_TIMESTAMP'
  | 'TIMESTAMP_OUTSIDE_TOLERANCE'
  | 'NO_MATCHING_SIGNATURE'
  | 'INVALID_PAYLOAD'
  | 'INVALID_SECRET';

/** @deprecated Since 0.2.0: use `WebhookVerificationCode` (the error's `.code`). */
export type WebhookVerificationReason = WebhookVerificationCode;

/** The `code` of any error the SDK throws. */
export type ErrorCode = ApiErrorCode | ClientErrorCode | WebhookVerificationCode;

export interface ErrorDetail {
  field: string;
  message: string;
  /** In a payout batch's refusal: the code a payout of its own would get for this item's problem. */
  code?: ApiErrorCode;
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

/** Every error the SDK throws. Branch on `code` or on the subclass. */
export class CommerceError extends Error {
  readonly code: ErrorCode;
  /** The HTTP status; undefined when no answer came (connection errors, time-outs) or none was asked. */
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
/** No answer: the connection failed, timed out, or the caller's signal aborted it. */
export class ConnectionError extends CommerceError {}
/** The SDK was set up wrongly (a malformed API key, a live key where only test keys go); nothing was sent. */
export class ConfigurationError extends CommerceError {}

/** A webhook delivery that does not prove it came from the API; answer it 4xx. */
export class WebhookVerificationError extends CommerceError {
  declare readonly code: WebhookVerificationCode;

  constructor(code: WebhookVerificationCode, message: string) {
    super({ code, message });
  }

  /** @deprecated Since 0.2.0: use `code`, as on every other error of the SDK. */
  get reason(): WebhookVerificationCode {
    return this.code;
  }
}

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
