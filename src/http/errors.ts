/**
 * The error catalogue: every code the API can answer, with its HTTP status and default message.
 * api.md section 7 plus the codes decisions.md adds. Clients branch on `code`; messages may change.
 */
export const errorCatalogue = {
  // Authentication and access (api.md 5)
  MISSING_CREDENTIALS: { status: 401, message: 'No Authorization header. Send "Authorization: Bearer <API_KEY>".' },
  INVALID_AUTH_HEADER: { status: 401, message: 'Malformed Authorization header. Expected "Bearer <API_KEY>".' },
  INVALID_API_KEY: {
    status: 401,
    message: 'The API key is unknown, malformed, or past its expiry (a rolled key after its overlap).',
  },
  API_ACCESS_NOT_ACTIVE: { status: 403, message: 'This API key is suspended or revoked.' },
  LIVE_ACCESS_NOT_APPROVED: { status: 403, message: 'This business is not approved for live mode yet.' },
  SECRET_KEY_REQUIRED: { status: 403, message: 'This endpoint needs a secret key (sk_...).' },
  SCOPE_REQUIRED: { status: 403, message: 'This API key lacks the scope this endpoint needs.' },
  IP_NOT_ALLOWED: { status: 403, message: 'Requests from this IP address are not allowed for this API key.' },
  FEATURE_DISABLED: { status: 503, message: 'The Developer API is disabled for this account.' },
  SANDBOX_ONLY: { status: 403, message: 'This endpoint is only available with a test key.' },
  SANDBOX_MISMATCH: { status: 403, message: 'Test keys reach sandbox data only and live keys live data only.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests for this API key. Retry after the time given.' },
  TOO_MANY_DOWNLOADS: {
    status: 429,
    message: 'This business has as many downloads running as it may at once. Retry after the time given.',
  },

  // Request shape
  IDEMPOTENCY_KEY_REQUIRED: { status: 400, message: 'Write requests need an X-Idempotency-Key header.' },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    message: 'This idempotency key was already used with a different method, path or body.',
  },
  IDEMPOTENCY_KEY_IN_PROGRESS: {
    status: 409,
    message: 'A request with this idempotency key is still being processed. Retry shortly.',
  },
  VALIDATION_ERROR: { status: 400, message: 'The request is invalid.' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported Content-Type for this endpoint.' },
  ENDPOINT_NOT_FOUND: { status: 404, message: 'No such endpoint.' },

  // Payment intents
  INTENT_NOT_FOUND: { status: 404, message: 'No payment intent with this reference.' },
  INTENT_NOT_PENDING: { status: 400, message: 'The payment intent is not pending.' },
  INTENT_CANCEL_INVALID_STATUS: { status: 400, message: 'Only a PENDING payment intent can be cancelled.' },
  INTENT_CANCEL_CONFLICT: { status: 400, message: 'The payment intent changed status while it was being cancelled.' },
  INTENT_REFUND_INVALID_STATUS: { status: 400, message: 'Only a PAID payment intent can be refunded.' },
  AMOUNT_OUT_OF_RANGE: { status: 400, message: 'The amount is outside the allowed range.' },
  METADATA_TOO_MANY_KEYS: { status: 400, message: 'Metadata may have at most 50 keys.' },
  METADATA_VALUE_TOO_LONG: { status: 400, message: 'Metadata values may have at most 500 characters.' },
  REFUND_AMOUNT_INVALID: { status: 400, message: 'The refund amount must be at least 1 and at most what is left.' },
  CODE_SPACE_EXHAUSTED: { status: 503, message: 'No payment code is free right now. Retry later.' },
  PAYMENT_NOT_FOUND: { status: 404, message: 'No payment with this id.' },

  // Payment links: the merchant's lookups, and what a payer meets on a link that takes no payment
  PAYMENT_LINK_NOT_FOUND: { status: 404, message: 'No payment link with this reference.' },
  PAYMENT_LINK_INACTIVE: { status: 409, message: 'This payment link is not active. Nothing was charged.' },
  PAYMENT_LINK_COMPLETED: {
    status: 409,
    message: 'This payment link has taken all the payments it accepts. Nothing was charged.',
  },
  PAYMENT_LINK_EXPIRED: { status: 409, message: 'This payment link has expired. Nothing was charged.' },

  // Sellers: the merchant's lookups
  SELLER_NOT_FOUND: { status: 404, message: 'No seller with this id.' },
  SELLER_DISABLED: { status: 409, message: 'This seller is DISABLED: it takes no new split. Nothing was created.' },

  // Payment requests: pushed to a payer's wallet, answered in the wallet app
  PAYMENT_REQUEST_NOT_FOUND: { status: 404, message: 'No payment request with this id.' },
  PAYMENT_REQUEST_PENDING: {
    status: 409,
    message: 'This intent already has a pending payment request. Cancel it or wait for its answer.',
  },
  PAYMENT_REQUEST_NOT_PENDING: { status: 409, message: 'This payment request was already answered or ended.' },
  PAYMENT_REQUESTS_MUTED: { status: 403, message: 'This payer does not accept payment requests from this business.' },
  TOO_MANY_PAYMENT_REQUESTS: {
    status: 429,
    message: 'Too many payment requests to this phone from this business. Retry after the time given.',
  },

  // Wallets and ledger
  INSUFFICIENT_BALANCE: { status: 402, message: 'The balance cannot cover this amount.' },
  INVALID_PIN: { status: 401, message: 'Wrong wallet PIN.' },
  WALLET_LOCKED: { status: 403, message: 'The wallet is locked after too many wrong PINs.' },
  WALLET_NOT_FOUND: { status: 404, message: 'No wallet for this phone number.' },
  PAYMENT_FAILED: { status: 402, message: 'The payment could not be completed. Nothing was charged.' },
  BALANCE_TRANSACTION_NOT_FOUND: { status: 404, message: 'No balance transaction with this id.' },

  // Payouts (and refunds: the merchant's side of too little money)
  INSUFFICIENT_FUNDS: {
    status: 402,
    message: "The merchant's available balance cannot cover this payout (amount and fee) or refund. Nothing moved.",
  },
  PAYOUT_NOT_FOUND: { status: 404, message: 'No payout with this reference.' },
  PAYOUT_BATCH_NOT_FOUND: { status: 404, message: 'No payout batch with this id.' },
  PAYOUT_NOT_PENDING: { status: 400, message: 'Only a PENDING payout can be cancelled.' },
  TOO_MANY_PENDING_PAYOUTS: {
    status: 429,
    message: 'Too many sandbox payouts of this business are waiting to be sent. Retry after the time given.',
  },
  STATEMENT_PERIOD_INVALID: { status: 400, message: 'The statement period is not a valid month or date range.' },

  // Catalog
  NO_FILE: { status: 400, message: 'No file in the form field "file".' },
  INVALID_FILE_TYPE: { status: 400, message: 'The file must be a JPEG, PNG or WebP image.' },
  FILE_TOO_LARGE: { status: 400, message: 'The file is larger than 5 MB.' },
  PRODUCT_NOT_FOUND: { status: 404, message: 'No product for this id or externalId.' },
  SHOP_NOT_FOUND: { status: 404, message: 'This business has no shop in this environment.' },
  VARIANT_NOT_FOUND: { status: 404, message: 'No such variant on this product.' },
  VARIANT_LABEL_AMBIGUOUS: { status: 400, message: 'Several variants match this label; use the variant _id.' },
  EXTERNAL_ID_TAKEN: { status: 409, message: 'Another product of this shop already uses this externalId.' },
  INSUFFICIENT_STOCK: { status: 400, message: 'The quantity ordered is above the stock.' },
  CSV_INVALID: { status: 400, message: 'The CSV file cannot be parsed.' },

  // Orders
  ORDER_NOT_FOUND: { status: 404, message: 'No order with this reference.' },
  ORDER_INVALID_TRANSITION: { status: 400, message: 'This action is not allowed in the order status.' },

  // Webhooks
  MAX_ENDPOINTS_REACHED: { status: 400, message: 'A business may have at most 5 webhook endpoints.' },
  EVENTS_NOT_PERMITTED: { status: 403, message: 'The scopes of this key do not allow these event types.' },
  INVALID_WEBHOOK_EVENT: { status: 400, message: 'Unknown event name.' },
  INVALID_WEBHOOK_URL: { status: 400, message: 'The webhook URL must be a public HTTPS URL.' },
  EVENT_NOT_FOUND: { status: 404, message: 'No event with this id.' },
  DELIVERY_NOT_FOUND: { status: 404, message: 'No webhook delivery with this id.' },
  ENDPOINT_INACTIVE: {
    status: 409,
    message: 'This webhook endpoint is disabled. Re-enable it (PATCH active: true) first.',
  },

  // API keys through the API (decision 084)
  API_KEY_NOT_FOUND: { status: 404, message: 'No API key with this id.' },
  API_KEY_NOT_ACTIVE: { status: 409, message: 'This API key is not active (suspended, revoked, rolled or expired).' },
  SCOPE_ESCALATION: {
    status: 403,
    message: 'A key cannot make or roll a key with a scope it lacks, nor one that outlives it.',
  },

  // Operators
  ADMIN_UNAUTHORIZED: { status: 401, message: 'Missing or wrong admin token.' },
  NOT_FOUND: { status: 404, message: 'Not found.' },
  MONTH_NOT_ARCHIVABLE: { status: 409, message: 'This month of money records cannot be archived now.' },
  PARTITION_BUSY: {
    status: 503,
    message: 'The table was busy and the change gave up rather than hold up payments. Retry shortly.',
  },

  // Merchant dashboard
  LAST_OWNER: {
    status: 409,
    message: 'A business keeps at least one active owner: make another user an owner first.',
  },
  ROLE_NOT_ALLOWED: { status: 403, message: 'Your role in this business does not allow this.' },
  OWNERS_ONLY: { status: 403, message: 'Only an owner makes, changes or removes an owner.' },

  NOT_READY: { status: 503, message: 'The server cannot reach its database yet. Retry shortly.' },
  DATABASE_UNAVAILABLE: { status: 503, message: 'The database cannot be reached right now. Retry shortly.' },
  INTERNAL_ERROR: { status: 500, message: 'Something went wrong on our side. Quote the request id if it persists.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export interface ErrorDetail {
  field: string;
  message: string;
  /**
   * In an answer about many items (a payout batch): the code the same problem gets in a request
   * of its own (AMOUNT_OUT_OF_RANGE, METADATA_VALUE_TOO_LONG, VALIDATION_ERROR, ...).
   */
  code?: ErrorCode;
}

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, such as Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message ?? errorCatalogue[code].message);
    this.status = errorCatalogue[code].status;
  }
}

/** A VALIDATION_ERROR about one field, its message naming the field. */
export function invalid(field: string, message: string): ApiError {
  return new ApiError('VALIDATION_ERROR', `${field} ${message}.`, [{ field, message }]);
}
