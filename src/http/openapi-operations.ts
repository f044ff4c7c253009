import { orderActions, type WorkflowAction } from '../modules/orders/state.js';
import {
  SANDBOX_DEFAULT_PAYER,
  SANDBOX_FAILING_PAYOUT_PHONE,
  SANDBOX_LOCKED_PAYER,
  SANDBOX_WALLET_PIN,
} from '../modules/sandbox/sandbox.js';
import { RECOVER_BATCH } from '../modules/webhooks/deliveries.js';
import type { ErrorCode } from './errors.js';

/**
 * What the route schemas cannot say about an operation: its stable name (the SDK's and the
 * generated clients' method name), a summary, a description, the codes its own logic can answer
 * (the codes of authentication, validation and idempotency are added from the route's config) and
 * a request example. Keyed by `METHOD /path` below the API base, in OpenAPI's `{param}` form.
 * Kept apart from the route files so that documenting an operation never touches its handler.
 */
export interface OperationDoc {
  operationId: string;
  summary: string;
  description: string;
  codes?: readonly ErrorCode[];
  requestExample?: Record<string, unknown>;
  /** A multipart upload: what the `file` field holds. */
  upload?: string;
  /**
   * The body is required although its schema takes `{}` (the operation needs one of its fields,
   * which the schema cannot say): openapi.ts otherwise marks such bodies optional.
   */
  bodyRequired?: true;
  /** The success answer is CSV text. */
  csv?: boolean;
  /** Other media types the success answer may take besides JSON (chosen by a query parameter). */
  alsoAnswers?: readonly ('text/csv' | 'text/html')[];
}

/** What every download (exports, statement files) says of its limits (http/downloads.ts). */
const DOWNLOAD_LIMITS =
  'A download whose client reads nothing for 30 s (DOWNLOAD_STALL_SECONDS) is ended; a business may have 4 downloads running at once per environment (DOWNLOADS_PER_BUSINESS), one more answers 429 TOO_MANY_DOWNLOADS with Retry-After.';

const STATEMENT_FILES =
  'With `format=csv`, a download (`statement-<period>.csv`): the same figures as a summary block, a blank line, then a header row and every transaction of the period, oldest first, with the columns of the export and a running balance (amounts in centimes; text cells a spreadsheet would run as a formula start with an apostrophe, and an apostrophe follows each `;`, tab or line break that a formula would follow). With `format=html`, a printable page (A4) of the same. `lang` (en, fr, ar) chooses the labels of both; both are streamed. ' +
  DOWNLOAD_LIMITS +
  ' A period that matches the pattern but is not in the calendar answers STATEMENT_PERIOD_INVALID; a malformed one, VALIDATION_ERROR. A statement covers the whole balance of its period: it takes no `type` or `source`.';
const STATEMENT_FIGURES =
  "the opening balance (the sum of `net` of every balance transaction of the key's environment created before the period), the totals of the period by type (one entry per type, in a fixed order: count, gross = sum of `amount`, fees = sum of `fee`, net = sum of `net`), and the closing balance (opening + the period's net), to the centime with `GET /balance/transactions`. `period.to` is exclusive: the first instant after the period.";

const INTENT_CODES = ['INTENT_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;
const ORDER_CODES = ['ORDER_NOT_FOUND', 'SANDBOX_MISMATCH', 'ORDER_INVALID_TRANSITION'] as const;
const PRODUCT_CODES = ['PRODUCT_NOT_FOUND', 'SHOP_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;
const ENDPOINT_CODES = ['ENDPOINT_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;
const PAYOUT_CODES = ['PAYOUT_NOT_FOUND', 'SANDBOX_MISMATCH'] as const;

/** What every read of payments says a payment is. */
const PAYMENT_ATTEMPTS =
  "A payment is one attempt to pay an intent or an order, whatever its outcome: `SUCCEEDED` (the money moved: `commission` and the `settlement` lines it credited, which add up to `amount` + the payer fee, and `settledAt`), `FAILED` (nothing moved: `failure.code` says why, such as INSUFFICIENT_BALANCE, INVALID_PIN, WALLET_LOCKED, SANDBOX_DECLINED or SIMULATED_FAILURE), or `PROCESSING` (a payer who has not answered yet). `method` is WALLET_PIN (a wallet and its PIN typed on a hosted page) or SANDBOX (`simulate` with a test key). The payer's phone is masked as in events.";

/** What every payout operation's description shares: how a payout is sent, fails and reconciles. */
const PAYOUT_SENDING =
  'The worker sends a PENDING payout within about a second: PAID (`payout.paid`) when the wallet takes it, or FAILED (`payout.failed`) with `failureCode` WALLET_NOT_FOUND (no wallet has the phone) or WALLET_LOCKED (the wallet is locked), its amount and fee then back in the balance (`payout_reversal`).';
const PAYOUT_SANDBOX = `Sandbox (test keys): any E.164 phone without a wallet gets a sandbox wallet (PIN ${SANDBOX_WALLET_PIN}) when the payout is sent; a payout to ${SANDBOX_FAILING_PAYOUT_PHONE} always fails with WALLET_NOT_FOUND, and one to the locked sandbox wallet ${SANDBOX_LOCKED_PAYER} fails with WALLET_LOCKED. A business keeps at most \`SANDBOX_PENDING_PAYOUTS_MAX\` (2,000) sandbox payouts waiting to be sent: beyond, 429 TOO_MANY_PENDING_PAYOUTS with \`Retry-After\`, nothing created (not stored under the idempotency key: retry with the same key).`;
const PAYOUT_RECONCILIATION =
  "Reconciliation: a payout settles the merchant's balance transactions that no payout had settled yet when it was created (`GET /payouts/{referenceNumber}/transactions`). A failed or cancelled single payout releases them to the next payout; a batch settles them as a whole, and every payout of the batch lists the same transactions.";

/** What creating a batch does, at either of its paths. */
const PAYOUT_BATCH = [
  'Up to 1,000 payouts in one request, all or nothing. Every item is checked first, and one answer names every bad item: 400 VALIDATION_ERROR with one entry of `details` per problem, its `field` naming the item (`body.items.3.amount`, `body.items.5.destination.phone`) and its `code` the one a payout of its own would get for it (AMOUNT_OUT_OF_RANGE, METADATA_TOO_MANY_KEYS, METADATA_VALUE_TOO_LONG, or VALIDATION_ERROR for a field of the wrong shape), whatever the mix; nothing is created. Then the amounts and fees of every item are reserved together, or 402 INSUFFICIENT_FUNDS and nothing is reserved. Each item becomes its own PENDING payout (with its own fee, `batchId` and `payout.created`), answered in the order of the items. The body may be up to 4 MB (1 MB elsewhere): about 4 KB an item at 1,000 items; a larger one answers 413 PAYLOAD_TOO_LARGE and is split.',
  PAYOUT_SENDING,
  PAYOUT_SANDBOX,
  PAYOUT_RECONCILIATION,
].join('\n\n');
const PAYOUT_BATCH_EXAMPLE = {
  items: [
    { amount: 120000, destination: { type: 'WALLET', phone: '+22220000001' }, description: 'Driver 1' },
    { amount: 80000, destination: { type: 'WALLET', phone: '+22220000002' }, description: 'Driver 2' },
  ],
};

/** A workflow step's operation, told from the order state table (where it starts, leads and what it sends). */
const orderAction = (action: WorkflowAction): OperationDoc => {
  const { from, to, event } = orderActions[action];
  return {
    operationId: `${action}Order`,
    summary: `${action[0]!.toUpperCase()}${action.slice(1)} an order`,
    description: `Moves the order from ${from.join(' or ')} to ${to}${event ? ` and sends \`${event}\`` : ' (no event)'}. Any other status answers ORDER_INVALID_TRANSITION.`,
    codes: ORDER_CODES,
  };
};

export const operationDocs: Record<string, OperationDoc> = {
  // Payment intents
  'POST /intents': {
    operationId: 'createIntent',
    summary: 'Create a payment intent',
    description:
      'Creates a PENDING intent with a 6-digit payment code and a hosted checkout URL (`payUrl`), valid 24 hours. Sends `payment.created`.',
    codes: ['AMOUNT_OUT_OF_RANGE', 'METADATA_TOO_MANY_KEYS', 'METADATA_VALUE_TOO_LONG', 'CODE_SPACE_EXHAUSTED'],
    requestExample: { amount: 150000, label: 'Order #1042', metadata: { orderId: '1042' } },
    bodyRequired: true,
  },
  'GET /intents': {
    operationId: 'listIntents',
    summary: 'List payment intents',
    description: 'Newest first, paginated. Filters by status and creation date.',
  },
  'GET /intents/{referenceNumber}': {
    operationId: 'retrieveIntent',
    summary: 'Retrieve a payment intent',
    description: 'The full intent, with its payment and refunds. A publishable key may read it.',
    codes: INTENT_CODES,
  },
  'GET /intents/{referenceNumber}/payments': {
    operationId: 'listIntentPayments',
    summary: "List a payment intent's payments",
    description: [
      'Every attempt to pay the intent, failed ones included, newest first, paginated.',
      PAYMENT_ATTEMPTS,
    ].join('\n\n'),
    codes: INTENT_CODES,
  },
  'POST /intents/{referenceNumber}/cancel': {
    operationId: 'cancelIntent',
    summary: 'Cancel a payment intent',
    description: 'Cancels a PENDING intent and sends `payment.cancelled`. No body.',
    codes: [...INTENT_CODES, 'INTENT_CANCEL_INVALID_STATUS', 'INTENT_CANCEL_CONFLICT'],
  },
  'POST /intents/{referenceNumber}/refund': {
    operationId: 'refundIntent',
    summary: 'Refund a payment intent',
    description:
      'Refunds a PAID intent in full (no amount) or in part, from the merchant balance. Sends `payment.refunded`. A balance that cannot cover the refund answers 402 INSUFFICIENT_FUNDS (as a payout does) and nothing moves.',
    codes: [...INTENT_CODES, 'INTENT_REFUND_INVALID_STATUS', 'REFUND_AMOUNT_INVALID', 'INSUFFICIENT_FUNDS'],
    requestExample: { amount: 50000, reason: 'Damaged item' },
  },
  'POST /intents/{referenceNumber}/simulate': {
    operationId: 'simulateIntentPayment',
    summary: 'Simulate a payment (sandbox)',
    description:
      'Test keys only: pays the intent from a sandbox wallet (`outcome: success`) or fails it (`failure`), with the events a real payment sends. From `+22220000004` (approves), `+22220000005` (declines) or `+22220000006` (never answers) the intent stays `PENDING` with a `PROCESSING` payment, which the payer ends about 2 s later (or the timeout ends); see the sandbox scenarios in docs/payments.md.',
    codes: [...INTENT_CODES, 'INTENT_NOT_PENDING', 'AMOUNT_OUT_OF_RANGE', 'PAYMENT_FAILED', 'WALLET_LOCKED'],
    requestExample: { outcome: 'success' },
  },
  'POST /intents/{referenceNumber}/simulate-expiry': {
    operationId: 'simulateIntentExpiry',
    summary: 'Simulate expiry (sandbox)',
    description: 'Test keys only: expires a PENDING intent now, as 24 hours would, and sends `payment.expired`.',
    codes: [...INTENT_CODES, 'INTENT_NOT_PENDING'],
  },

  // Payments
  'GET /payments/{id}': {
    operationId: 'retrievePayment',
    summary: 'Retrieve a payment',
    description: [
      'One payment by its `pay_` id, with the reference of the intent (`intent`) or order (`order`) it pays. A payment of an order also needs the scope `store.orders:read` (SCOPE_REQUIRED otherwise). A payment of the other environment answers SANDBOX_MISMATCH.',
      PAYMENT_ATTEMPTS,
    ].join('\n\n'),
    codes: ['PAYMENT_NOT_FOUND', 'SANDBOX_MISMATCH'],
  },

  // Payouts
  'POST /payouts': {
    operationId: 'createPayout',
    summary: 'Create a payout',
    description: [
      'Sends `amount` centimes from the merchant balance to a wallet. The payout fee is taken on top of the amount: the payout shows it as `fee`, and `totalDebited` (amount + fee) is what the balance gives, reserved at once (balance transactions `payout` and `payout_fee`). A balance that cannot cover amount + fee answers 402 INSUFFICIENT_FUNDS and reserves nothing. The payout starts PENDING and sends `payout.created`.',
      PAYOUT_SENDING,
      PAYOUT_SANDBOX,
      PAYOUT_RECONCILIATION,
    ].join('\n\n'),
    codes: [
      'AMOUNT_OUT_OF_RANGE',
      'METADATA_TOO_MANY_KEYS',
      'METADATA_VALUE_TOO_LONG',
      'INSUFFICIENT_FUNDS',
      'TOO_MANY_PENDING_PAYOUTS',
    ],
    requestExample: {
      amount: 250000,
      destination: { type: 'WALLET', phone: '+22220000001' },
      description: 'Weekly payout',
      metadata: { week: '48' },
    },
  },
  'POST /payouts/batches': {
    operationId: 'createPayoutBatch',
    summary: 'Create a batch of payouts',
    description: PAYOUT_BATCH,
    codes: ['INSUFFICIENT_FUNDS', 'TOO_MANY_PENDING_PAYOUTS'],
    requestExample: PAYOUT_BATCH_EXAMPLE,
  },
  'POST /payouts/batch': {
    operationId: 'createPayoutBatchDeprecated',
    summary: 'Create a batch of payouts (deprecated path)',
    description: [
      'Deprecated: the path batches were first created at, kept as an alias of `POST /payouts/batches`, which answers exactly the same. New code uses `POST /payouts/batches`.',
      PAYOUT_BATCH,
    ].join('\n\n'),
    codes: ['INSUFFICIENT_FUNDS', 'TOO_MANY_PENDING_PAYOUTS'],
    requestExample: PAYOUT_BATCH_EXAMPLE,
  },
  'GET /payouts': {
    operationId: 'listPayouts',
    summary: 'List payouts',
    description:
      "The payouts of the key's environment, newest first, paginated. Filters: `status`, `batch` (a `pob_` id: that batch's payouts in the order of its items), `from`, `to` (creation date).",
  },
  'GET /payouts/{referenceNumber}': {
    operationId: 'retrievePayout',
    summary: 'Retrieve a payout',
    description:
      'One payout by its `PO-` reference: status, `amount`, `fee` and `totalDebited`, destination, and once it is done `paidAt`, or `failedAt` with `failureCode` and `failureMessage`, or `cancelledAt`. A reference of the other environment answers SANDBOX_MISMATCH.',
    codes: PAYOUT_CODES,
  },
  'GET /payouts/{referenceNumber}/transactions': {
    operationId: 'listPayoutTransactions',
    summary: "List a payout's settled transactions",
    description: [
      'The balance transactions this payout settles, newest first, paginated, in the shape of `GET /balance/transactions`.',
      PAYOUT_RECONCILIATION,
    ].join('\n\n'),
    codes: PAYOUT_CODES,
  },
  'POST /payouts/{referenceNumber}/cancel': {
    operationId: 'cancelPayout',
    summary: 'Cancel a payout',
    description:
      'Cancels a PENDING payout: CANCELLED, its amount and fee back in the balance (`payout_reversal`), and `payout.cancelled`. A single payout releases the transactions it settled to the next payout. A payout already PAID, FAILED or CANCELLED (the worker may have sent it a moment before) answers PAYOUT_NOT_PENDING. No body.',
    codes: [...PAYOUT_CODES, 'PAYOUT_NOT_PENDING'],
  },
  'GET /payouts/batches/{id}': {
    operationId: 'retrievePayoutBatch',
    summary: 'Retrieve a payout batch',
    description:
      'A batch by its `pob_` id: item count, total amount and total fee, and how many of its payouts are in each status (`counts`). Its payouts: `GET /payouts?batch=pob_...`. A batch of the other environment answers SANDBOX_MISMATCH.',
    codes: ['PAYOUT_BATCH_NOT_FOUND', 'SANDBOX_MISMATCH'],
  },

  // Events
  'GET /events': {
    operationId: 'listEvents',
    summary: 'List events',
    description:
      "The events of the key's business and environment, of the types its scopes may read. Newest first with `page`; or, with `after=evt_...`, the events that follow it oldest first (for polling consumers: pass the last id seen). Both follow one order, the order in which the events were committed: the pages read newest first are that order reversed, whatever the events' `createdAt` (events written together share one). Filters by `type` (a name or a `prefix.*`) and `object` (an intent, order or payout reference, a product id). Events are kept at least 30 days.",
    codes: ['EVENT_NOT_FOUND'],
  },
  'GET /events/{id}': {
    operationId: 'retrieveEvent',
    summary: 'Retrieve an event',
    description:
      'One event with its payload exactly as delivered to webhook endpoints. An event of the other environment answers SANDBOX_MISMATCH.',
    codes: ['EVENT_NOT_FOUND', 'SANDBOX_MISMATCH'],
  },

  // Webhooks
  'POST /webhooks/endpoints': {
    operationId: 'createWebhookEndpoint',
    summary: 'Create a webhook endpoint',
    description:
      'Subscribes a public https URL to events. The answer carries the signing `secret`, shown once. At most 5 endpoints.',
    codes: ['MAX_ENDPOINTS_REACHED', 'EVENTS_NOT_PERMITTED', 'INVALID_WEBHOOK_EVENT', 'INVALID_WEBHOOK_URL'],
    requestExample: { url: 'https://shop.example.com/hooks/commerce', events: ['payment.confirmed', 'order.new'] },
  },
  'GET /webhooks/endpoints': {
    operationId: 'listWebhookEndpoints',
    summary: 'List webhook endpoints',
    description: "The endpoints of the key's environment, without their secrets.",
  },
  'GET /webhooks': {
    operationId: 'listWebhooks',
    summary: 'List webhook endpoints (alias)',
    description: 'The same list as `GET /webhooks/endpoints`.',
  },
  'GET /webhooks/endpoints/{id}': {
    operationId: 'retrieveWebhookEndpoint',
    summary: 'Retrieve a webhook endpoint',
    description: 'One endpoint, without its secret.',
    codes: ENDPOINT_CODES,
  },
  'PATCH /webhooks/endpoints/{id}': {
    operationId: 'updateWebhookEndpoint',
    summary: 'Update a webhook endpoint',
    description:
      'Changes the URL, the events, the rate or `active`. Disabling it (`active: false`) ends its waiting deliveries DEAD with `deadReason` ENDPOINT_DISABLED; re-enabling it sends new events only (recover the rest). A key whose scopes do not allow every event the endpoint is subscribed to (or every event asked for) cannot change it: EVENTS_NOT_PERMITTED.',
    codes: [...ENDPOINT_CODES, 'EVENTS_NOT_PERMITTED', 'INVALID_WEBHOOK_EVENT', 'INVALID_WEBHOOK_URL'],
    requestExample: { active: true },
  },
  'DELETE /webhooks/endpoints/{id}': {
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    description:
      'Stops its deliveries: the waiting ones end DEAD with `deadReason` ENDPOINT_DELETED. Its delivery log stays readable. EVENTS_NOT_PERMITTED if the scopes of the key do not allow every event the endpoint is subscribed to.',
    codes: [...ENDPOINT_CODES, 'EVENTS_NOT_PERMITTED'],
  },
  'POST /webhooks/endpoints/{id}/rotate-secret': {
    operationId: 'rotateWebhookEndpointSecret',
    summary: 'Rotate an endpoint secret',
    description:
      'Issues a new secret (in the answer). The old one keeps signing alongside for 24 hours: deliveries then carry both signatures. EVENTS_NOT_PERMITTED if the scopes of the key do not allow every event the endpoint is subscribed to.',
    codes: [...ENDPOINT_CODES, 'EVENTS_NOT_PERMITTED'],
  },
  'POST /webhooks/endpoints/{id}/test': {
    operationId: 'testWebhookEndpoint',
    summary: 'Send a test event',
    description:
      'Sends a `ping` event to this endpoint only and answers its delivery (PENDING: no attempt yet). A disabled endpoint answers ENDPOINT_INACTIVE and gets nothing.',
    codes: [...ENDPOINT_CODES, 'ENDPOINT_INACTIVE'],
  },
  'POST /webhooks/endpoints/{id}/recover': {
    operationId: 'recoverWebhookEndpoint',
    summary: 'Recover failed deliveries',
    description: `Queues again, each on a fresh 8-attempt schedule (PENDING), the DEAD deliveries of the endpoint created in a window, whatever their \`deadReason\` (at most ${RECOVER_BATCH.toLocaleString('en')} per call; \`remaining\` says how many are left). A disabled endpoint answers ENDPOINT_INACTIVE: re-enable it first. EVENTS_NOT_PERMITTED if the scopes of the key do not allow every event the endpoint is subscribed to.`,
    codes: [...ENDPOINT_CODES, 'ENDPOINT_INACTIVE', 'EVENTS_NOT_PERMITTED'],
    requestExample: { since: '2026-01-01' },
  },
  'GET /webhooks/endpoints/{id}/stats': {
    operationId: 'retrieveWebhookEndpointStats',
    summary: 'Endpoint delivery statistics',
    description: 'Backlog, last error, success rate and latency over the last 24 hours and 7 days.',
    codes: ENDPOINT_CODES,
  },
  'GET /webhooks/events': {
    operationId: 'listWebhookDeliveries',
    summary: 'List deliveries',
    description:
      'The delivery log, newest first. A delivery is PENDING (no attempt yet), FAILED (its last attempt failed and the next is scheduled: `nextAttemptAt`), SUCCEEDED, or DEAD (no attempt will follow; `deadReason` MAX_ATTEMPTS, ENDPOINT_DISABLED or ENDPOINT_DELETED). Filters by status, event name, endpoint, event id (`eventId`: the envelope `id` a receiver saw) and date. Only the deliveries of events the scopes of the key may read are listed (as in `GET /events`); webhook notices (ping, endpoint.disabled) are always.',
  },
  'GET /webhooks/events/{id}': {
    operationId: 'retrieveWebhookDelivery',
    summary: 'Retrieve a delivery',
    description:
      'One delivery with every attempt (request headers, answer) and the payload as delivered. A delivery of an event the scopes of the key may not read answers DELIVERY_NOT_FOUND, as `GET /events/{id}` does.',
    codes: ['DELIVERY_NOT_FOUND', 'SANDBOX_MISMATCH', 'ENDPOINT_NOT_FOUND'],
  },
  'POST /webhooks/events/{id}/retry': {
    operationId: 'retryWebhookDelivery',
    summary: 'Retry a delivery',
    description:
      'Attempts the delivery again now, in any state: a PENDING or FAILED one keeps its schedule, a SUCCEEDED or DEAD one starts a fresh 8-attempt schedule (PENDING). Its endpoint must be active (ENDPOINT_INACTIVE otherwise). A delivery of an event the key may not read answers DELIVERY_NOT_FOUND; one of an endpoint subscribed to events its scopes do not allow, EVENTS_NOT_PERMITTED.',
    codes: [
      'DELIVERY_NOT_FOUND',
      'SANDBOX_MISMATCH',
      'ENDPOINT_NOT_FOUND',
      'ENDPOINT_INACTIVE',
      'EVENTS_NOT_PERMITTED',
    ],
  },

  // Products
  'POST /store/products': {
    operationId: 'createProduct',
    summary: 'Create a product',
    description: 'Adds a product to the shop; DISABLED unless `status` says otherwise.',
    codes: ['SHOP_NOT_FOUND', 'EXTERNAL_ID_TAKEN', 'VARIANT_LABEL_AMBIGUOUS'],
    requestExample: { name: 'Mint tea 250 g', price: 45000, externalId: 'TEA-250', quantity: 40, status: 'ACTIVE' },
  },
  'GET /store/products': {
    operationId: 'listProducts',
    summary: 'List products',
    description: 'Paginated; search by name, filter by status and category, sort by date or price.',
    codes: ['SHOP_NOT_FOUND'],
  },
  'GET /store/products/{id}': {
    operationId: 'retrieveProduct',
    summary: 'Retrieve a product',
    description:
      '`{id}` is the product id or its `externalId` (up to 256 characters, percent-encoded). ' +
      'ExternalIds are stored in Unicode NFC and compared in it, so both spellings of an accented letter find the product.',
    codes: PRODUCT_CODES,
  },
  'PUT /store/products/{id}': {
    operationId: 'replaceProduct',
    summary: 'Replace a product',
    description: 'Full replace: fields not sent take their defaults.',
    codes: [...PRODUCT_CODES, 'EXTERNAL_ID_TAKEN', 'VARIANT_NOT_FOUND', 'VARIANT_LABEL_AMBIGUOUS'],
    requestExample: { name: 'Mint tea 250 g', price: 47000, status: 'ACTIVE' },
  },
  'PATCH /store/products/{id}': {
    operationId: 'updateProduct',
    summary: 'Update a product',
    description: 'Only the fields sent change.',
    codes: [...PRODUCT_CODES, 'EXTERNAL_ID_TAKEN', 'VARIANT_NOT_FOUND', 'VARIANT_LABEL_AMBIGUOUS'],
    requestExample: { price: 47000 },
  },
  'DELETE /store/products/{id}': {
    operationId: 'deleteProduct',
    summary: 'Delete a product',
    description: 'Removes the product and its images.',
    codes: PRODUCT_CODES,
  },
  'POST /store/products/{id}/images': {
    operationId: 'uploadProductImage',
    summary: 'Upload a product image',
    description: 'Multipart form with one JPEG, PNG or WebP file (5 MB at most) in the field `file`.',
    upload: 'a JPEG, PNG or WebP image, 5 MB at most',
    codes: [...PRODUCT_CODES, 'NO_FILE', 'INVALID_FILE_TYPE', 'FILE_TOO_LARGE'],
  },
  'PATCH /store/products/{id}/inventory': {
    operationId: 'updateProductInventory',
    summary: 'Set or adjust stock',
    description:
      'Sets the quantity or adds a delta, for the product or one variant. Sends `product.stock_low` / `product.stock_out` on crossing.',
    codes: [...PRODUCT_CODES, 'VARIANT_NOT_FOUND', 'VARIANT_LABEL_AMBIGUOUS', 'INSUFFICIENT_STOCK'],
    requestExample: { delta: -2 },
    bodyRequired: true,
  },
  'POST /store/inventory': {
    operationId: 'updateInventoryBatch',
    summary: 'Update stock in bulk',
    description: 'Several stock changes in one all-or-nothing request.',
    codes: [...PRODUCT_CODES, 'VARIANT_NOT_FOUND', 'VARIANT_LABEL_AMBIGUOUS', 'INSUFFICIENT_STOCK'],
  },
  'POST /store/products/import': {
    operationId: 'importProducts',
    summary: 'Import products from CSV',
    description:
      'Multipart form with a CSV file in the field `file`; rows upsert by `externalId`. A row with an `id` (the ' +
      "export's last column) updates that product instead, so products without an `externalId` import again.",
    upload: 'a CSV file in the export format',
    codes: ['SHOP_NOT_FOUND', 'NO_FILE', 'FILE_TOO_LARGE', 'CSV_INVALID'],
  },
  'GET /store/products/export': {
    operationId: 'exportProducts',
    summary: 'Export products as CSV',
    description:
      "The shop's products that the list's filters take (`search`, `status`, `categoryId`; every product without them), oldest first, in the import format, with its `id` as the last column. Streamed; " +
      DOWNLOAD_LIMITS,
    csv: true,
    codes: ['SHOP_NOT_FOUND', 'TOO_MANY_DOWNLOADS'],
  },

  // Orders
  'POST /store/orders/simulate': {
    operationId: 'simulateOrder',
    summary: 'Simulate a customer order (sandbox)',
    description: 'Test keys only: places and pays a NEW order, takes stock and sends `order.new`.',
    codes: [
      'SHOP_NOT_FOUND',
      'PRODUCT_NOT_FOUND',
      'VARIANT_NOT_FOUND',
      'INSUFFICIENT_STOCK',
      'AMOUNT_OUT_OF_RANGE',
      'WALLET_LOCKED',
      'INSUFFICIENT_BALANCE',
    ],
    requestExample: { items: [{ productId: 'TEA-250', quantity: 2 }], customerName: 'Aicha' },
  },
  'GET /store/orders': {
    operationId: 'listOrders',
    summary: 'List orders',
    description: 'Newest first, paginated; filters by status and date.',
  },
  'GET /store/orders/{referenceNumber}': {
    operationId: 'retrieveOrder',
    summary: 'Retrieve an order',
    description: 'The order with its items, history and refunds.',
    codes: ['ORDER_NOT_FOUND', 'SANDBOX_MISMATCH'],
  },
  'GET /store/orders/{referenceNumber}/payments': {
    operationId: 'listOrderPayments',
    summary: "List an order's payments",
    description: ['The payments of the order, newest first, paginated.', PAYMENT_ATTEMPTS].join('\n\n'),
    codes: ['ORDER_NOT_FOUND', 'SANDBOX_MISMATCH'],
  },
  'POST /store/orders/{referenceNumber}/accept': orderAction('accept'),
  'POST /store/orders/{referenceNumber}/ready': orderAction('ready'),
  'POST /store/orders/{referenceNumber}/pickup': orderAction('pickup'),
  'POST /store/orders/{referenceNumber}/deliver': orderAction('deliver'),
  'POST /store/orders/{referenceNumber}/cancel': {
    operationId: 'cancelOrder',
    summary: 'Cancel an order',
    description:
      'NEW or PREPARING to CANCELLED with a reason; the stock is returned and a paid order refunded in full from the merchant balance (402 INSUFFICIENT_FUNDS and nothing changes when the balance cannot cover it). Sends `order.cancelled`.',
    codes: [...ORDER_CODES, 'INSUFFICIENT_FUNDS'],
    requestExample: { reason: 'Out of stock' },
  },
  'POST /store/orders/{referenceNumber}/refund': {
    operationId: 'refundOrder',
    summary: 'Refund an order',
    description:
      'Refunds a paid order in full (no amount) or in part, from the merchant balance. Sends `order.refunded`. A balance that cannot cover the refund answers 402 INSUFFICIENT_FUNDS (as a payout does) and nothing moves.',
    codes: [...ORDER_CODES, 'REFUND_AMOUNT_INVALID', 'INSUFFICIENT_FUNDS'],
    requestExample: { amount: 20000 },
  },
  'POST /store/orders/{referenceNumber}/propose-modification': {
    operationId: 'proposeOrderModification',
    summary: 'Propose a modification',
    description: 'Proposes new items to the customer (NEW or PREPARING orders).',
    codes: [...ORDER_CODES, 'PRODUCT_NOT_FOUND', 'VARIANT_NOT_FOUND', 'INSUFFICIENT_STOCK', 'AMOUNT_OUT_OF_RANGE'],
  },
  'POST /store/orders/{referenceNumber}/modification/decline': {
    operationId: 'declineOrderModification',
    summary: 'Decline a modification (sandbox)',
    description:
      'Test keys only: the customer declines the proposed modification; the order stays as it was. Sends `order.modification_declined`.',
    codes: ORDER_CODES,
  },
  'POST /store/orders/{referenceNumber}/modification/accept': {
    operationId: 'acceptOrderModification',
    summary: 'Accept a modification (sandbox)',
    description:
      'Test keys only: the customer accepts the proposed modification. Sends `order.modified`. A wallet that cannot pay the difference leaves the order as it was (INSUFFICIENT_BALANCE); so does a merchant balance that cannot return a lower total (INSUFFICIENT_FUNDS).',
    codes: [
      ...ORDER_CODES,
      'PRODUCT_NOT_FOUND',
      'VARIANT_NOT_FOUND',
      'INSUFFICIENT_STOCK',
      'WALLET_NOT_FOUND',
      'INSUFFICIENT_BALANCE',
      'INSUFFICIENT_FUNDS',
    ],
  },

  // Balance
  'GET /balance': {
    operationId: 'retrieveBalance',
    summary: 'Retrieve the merchant balance',
    description:
      "The available balance of the key's environment, in centimes: the sum of the `net` of its balance transactions.",
  },
  'GET /balance/transactions': {
    operationId: 'listBalanceTransactions',
    summary: 'List balance transactions',
    description:
      "Every movement of the merchant balance in the key's environment, newest first: payments, refunds, order payments, order refunds and modification adjustments, each with its gross `amount`, the `fee` the platform kept and the `net` that moved the balance. Filters: `type`, `source` (a PI-/OR- reference), `from`, `to`. Needs the `balance:read` scope.",
  },
  'GET /balance/transactions/export': {
    operationId: 'exportBalanceTransactions',
    summary: 'Export balance transactions as CSV',
    description:
      "The balance transactions that the list's filters take (`type`, `source`, `from`, `to`; all when absent) as CSV, streamed, newest first, with a header row naming the same fields as the list (id, type, amount, fee, net, currency, sourceReference, sourceKind, description, balanceAfter, createdAt); text cells that a spreadsheet would run as a formula start with an apostrophe, and an apostrophe follows each `;`, tab or line break that a formula would follow. " +
      DOWNLOAD_LIMITS,
    csv: true,
    codes: ['TOO_MANY_DOWNLOADS'],
  },
  'GET /balance/transactions/{id}': {
    operationId: 'retrieveBalanceTransaction',
    summary: 'Retrieve a balance transaction',
    description: 'One balance transaction by its `txn_` id.',
    codes: ['BALANCE_TRANSACTION_NOT_FOUND', 'SANDBOX_MISMATCH'],
  },
  'GET /balance/statements/{period}': {
    operationId: 'retrieveBalanceStatement',
    summary: 'Retrieve the balance statement of a month',
    description: `The statement of a UTC month (\`YYYY-MM\`): ${STATEMENT_FIGURES}\n\n${STATEMENT_FILES}`,
    codes: ['STATEMENT_PERIOD_INVALID', 'TOO_MANY_DOWNLOADS'],
    alsoAnswers: ['text/csv', 'text/html'],
  },
  'GET /balance/statements': {
    operationId: 'retrieveBalanceStatementForRange',
    summary: 'Retrieve the balance statement of a range of days',
    description: `The statement of the UTC days \`from\`..\`to\`, both included, at most 366 days: ${STATEMENT_FIGURES}\n\n${STATEMENT_FILES}`,
    codes: ['STATEMENT_PERIOD_INVALID', 'TOO_MANY_DOWNLOADS'],
    alsoAnswers: ['text/csv', 'text/html'],
  },

  // The storefront's customer API (no key; outside the API base)
  'GET /storefront/shops/{shopId}': {
    operationId: 'storefrontCatalog',
    summary: "A shop's catalog",
    description:
      "The shop's ACTIVE products with prices, variants, options and stock flags (`?search=`, `?page=`); `?mode=test` reads the shop's sandbox twin and lists the test wallets. Rate limited per address.",
    codes: ['SHOP_NOT_FOUND', 'RATE_LIMITED'],
  },
  'POST /storefront/shops/{shopId}/quote': {
    operationId: 'storefrontQuote',
    summary: 'Price a cart',
    description:
      'Prices every line on the server (catalog price + variant + options, times quantity; a flexible-price product takes the typed price, at least its catalog price) and adds the payer fee. Nothing is taken.',
    codes: [
      'SHOP_NOT_FOUND',
      'PRODUCT_NOT_FOUND',
      'VARIANT_NOT_FOUND',
      'INSUFFICIENT_STOCK',
      'AMOUNT_OUT_OF_RANGE',
      'RATE_LIMITED',
    ],
    requestExample: { items: [{ productId: 'prod_...', quantity: 2 }] },
  },
  'POST /storefront/shops/{shopId}/orders': {
    operationId: 'storefrontPlaceOrder',
    summary: 'Place and pay an order',
    description:
      "One transaction: prices the cart, takes the stock, debits the customer's wallet (amount + payer fee) after its PIN, credits the merchant and sends `order.new`. Anything refused takes nothing. An optional `X-Idempotency-Key` (scoped to the wallet) makes a retried or double-submitted order answer the first one. The answer's `orderUrl` is the customer's link to the order.",
    codes: [
      'SHOP_NOT_FOUND',
      'PRODUCT_NOT_FOUND',
      'VARIANT_NOT_FOUND',
      'INSUFFICIENT_STOCK',
      'AMOUNT_OUT_OF_RANGE',
      'INVALID_PIN',
      'WALLET_LOCKED',
      'WALLET_NOT_FOUND',
      'INSUFFICIENT_BALANCE',
      'IDEMPOTENCY_KEY_REUSED',
      'IDEMPOTENCY_KEY_IN_PROGRESS',
      'RATE_LIMITED',
    ],
    requestExample: {
      items: [{ productId: 'prod_...', quantity: 1 }],
      customerName: 'Mariem',
      phone: SANDBOX_DEFAULT_PAYER,
      pin: SANDBOX_WALLET_PIN,
    },
  },
  'GET /storefront/orders/{orderRef}': {
    operationId: 'storefrontGetOrder',
    summary: "The customer's order",
    description:
      'The order behind the customer link (`orderRef`, unguessable): status, lines, total, payment and refunds.',
    codes: ['ORDER_NOT_FOUND', 'RATE_LIMITED'],
  },
  'POST /storefront/orders/{orderRef}/cancel': {
    operationId: 'storefrontCancelOrder',
    summary: 'Cancel an order (customer)',
    description:
      'While the order is NEW: cancelled, refunded in full to the wallet, stock returned. Sends `order.cancelled`. A merchant balance that cannot cover the refund leaves the order as it was (INSUFFICIENT_FUNDS).',
    codes: ['ORDER_NOT_FOUND', 'ORDER_INVALID_TRANSITION', 'INSUFFICIENT_FUNDS', 'RATE_LIMITED'],
  },
  'POST /storefront/orders/{orderRef}/modification/accept': {
    operationId: 'storefrontAcceptModification',
    summary: 'Accept a proposed modification (customer)',
    description:
      'Takes the wallet PIN: the difference is charged (or refunded) and the order takes the proposed lines. Sends `order.modified`. A wallet that cannot pay the difference (INSUFFICIENT_BALANCE), or a merchant balance that cannot refund it (INSUFFICIENT_FUNDS), leaves the order as it was.',
    codes: [
      'ORDER_NOT_FOUND',
      'ORDER_INVALID_TRANSITION',
      'PRODUCT_NOT_FOUND',
      'VARIANT_NOT_FOUND',
      'INSUFFICIENT_STOCK',
      'INVALID_PIN',
      'WALLET_LOCKED',
      'WALLET_NOT_FOUND',
      'INSUFFICIENT_BALANCE',
      'INSUFFICIENT_FUNDS',
      'RATE_LIMITED',
    ],
  },
  'POST /storefront/orders/{orderRef}/modification/decline': {
    operationId: 'storefrontDeclineModification',
    summary: 'Decline a proposed modification (customer)',
    description: 'The order stays as it was; sends `order.modification_declined`.',
    codes: ['ORDER_NOT_FOUND', 'ORDER_INVALID_TRANSITION', 'RATE_LIMITED'],
  },
};
