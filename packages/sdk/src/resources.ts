import type { RequestOptions } from './client.js';
import { path, Resource } from './resource.js';
import type {
  Balance,
  BalanceStatement,
  BalanceTransaction,
  CreatedPayoutBatch,
  Event,
  Intent,
  Order,
  Payment,
  PaymentRequest,
  PaymentRequestInput,
  Payout,
  PayoutBatch,
  PayoutInput,
  Product,
  QueryOf,
  RequestBody,
  ResponseData,
  WebhookDeliveryDetail,
  WebhookEndpoint,
} from './types.js';

/**
 * An intent's payment requests (secret key, scopes `intents:write` / `intents:read`): the request
 * is pushed to the payer's wallet and approved there with the PIN; reached as `intents.requests`.
 */
export class IntentRequests extends Resource {
  /**
   * Asks the wallet of `phone` to pay the intent: `amount` only for an OPEN intent, `expiresIn` 60 to
   * 900 seconds (300 by default), `message` up to 100 characters. One pending request per intent.
   */
  create(referenceNumber: string, body: PaymentRequestInput, options?: RequestOptions) {
    return this.http.request<PaymentRequest>(
      { method: 'POST', path: `/intents/${path(referenceNumber)}/requests`, body },
      options,
    );
  }
  /** The intent's requests, newest first. */
  list(referenceNumber: string, query?: QueryOf<'listIntentPaymentRequests'>, options?: RequestOptions) {
    return this.paginate<'listIntentPaymentRequests'>(`/intents/${path(referenceNumber)}/requests`, query, options);
  }
}

export class Intents extends Resource {
  /** Requests pushed to a payer's wallet to pay an intent. */
  readonly requests = new IntentRequests(this.http);

  create(body: RequestBody<'createIntent'>, options?: RequestOptions) {
    return this.http.request<ResponseData<'createIntent'>>({ method: 'POST', path: '/intents', body }, options);
  }
  retrieve(referenceNumber: string, options?: RequestOptions) {
    return this.http.request<Intent>({ method: 'GET', path: `/intents/${path(referenceNumber)}` }, options);
  }
  list(query?: QueryOf<'listIntents'>, options?: RequestOptions) {
    return this.paginate<'listIntents'>('/intents', query, options);
  }
  /** Every attempt to pay the intent, failed ones included, newest first (secret key). */
  payments(referenceNumber: string, query?: QueryOf<'listIntentPayments'>, options?: RequestOptions) {
    return this.paginate<'listIntentPayments'>(`/intents/${path(referenceNumber)}/payments`, query, options);
  }
  cancel(referenceNumber: string, options?: RequestOptions) {
    return this.http.request<ResponseData<'cancelIntent'>>(
      { method: 'POST', path: `/intents/${path(referenceNumber)}/cancel`, body: {} },
      options,
    );
  }
  refund(referenceNumber: string, body: RequestBody<'refundIntent'> = {}, options?: RequestOptions) {
    return this.http.request<ResponseData<'refundIntent'>>(
      { method: 'POST', path: `/intents/${path(referenceNumber)}/refund`, body },
      options,
    );
  }
  /** Sandbox: pays (or fails) the intent as a payer would. */
  simulate(referenceNumber: string, body: RequestBody<'simulateIntentPayment'> = {}, options?: RequestOptions) {
    return this.http.request<ResponseData<'simulateIntentPayment'>>(
      { method: 'POST', path: `/intents/${path(referenceNumber)}/simulate`, body },
      options,
    );
  }
  /** Sandbox: expires the intent now. */
  simulateExpiry(referenceNumber: string, options?: RequestOptions) {
    return this.http.request<ResponseData<'simulateIntentExpiry'>>(
      { method: 'POST', path: `/intents/${path(referenceNumber)}/simulate-expiry`, body: {} },
      options,
    );
  }
}

/**
 * Payments: each attempt to pay an intent or an order, with its method, outcome, fees and
 * settlement (secret key, scope `intents:read`; an order's also `store.orders:read`). An intent's
 * or an order's are listed by `intents.payments` and `orders.payments`.
 */
export class Payments extends Resource {
  /** By its `pay_` id. */
  retrieve(id: string, options?: RequestOptions) {
    return this.http.request<Payment>({ method: 'GET', path: `/payments/${path(id)}` }, options);
  }
}

function fileForm(file: Blob, filename: string): FormData {
  const form = new FormData();
  form.append('file', file, filename);
  return form;
}

export class Products extends Resource {
  create(body: RequestBody<'createProduct'>, options?: RequestOptions) {
    return this.http.request<Product>({ method: 'POST', path: '/store/products', body }, options);
  }
  /** By id or externalId. */
  retrieve(id: string, options?: RequestOptions) {
    return this.http.request<Product>({ method: 'GET', path: `/store/products/${path(id)}` }, options);
  }
  list(query?: QueryOf<'listProducts'>, options?: RequestOptions) {
    return this.paginate<'listProducts'>('/store/products', query, options);
  }
  /** PATCH: only the fields sent change. */
  update(id: string, body: RequestBody<'updateProduct'>, options?: RequestOptions) {
    return this.http.request<Product>({ method: 'PATCH', path: `/store/products/${path(id)}`, body }, options);
  }
  /** PUT: a full replace. */
  replace(id: string, body: RequestBody<'replaceProduct'>, options?: RequestOptions) {
    return this.http.request<Product>({ method: 'PUT', path: `/store/products/${path(id)}`, body }, options);
  }
  del(id: string, options?: RequestOptions) {
    return this.http.request<ResponseData<'deleteProduct'>>(
      { method: 'DELETE', path: `/store/products/${path(id)}` },
      options,
    );
  }
  uploadImage(id: string, file: Blob, filename = 'image', options?: RequestOptions) {
    return this.http.request<ResponseData<'uploadProductImage'>>(
      { method: 'POST', path: `/store/products/${path(id)}/images`, form: fileForm(file, filename) },
      options,
    );
  }
  updateInventory(id: string, body: RequestBody<'updateProductInventory'>, options?: RequestOptions) {
    return this.http.request<ResponseData<'updateProductInventory'>>(
      { method: 'PATCH', path: `/store/products/${path(id)}/inventory`, body },
      options,
    );
  }
  /** CSV text in the import format. */
  export(options?: RequestOptions) {
    return this.http.request<string>({ method: 'GET', path: '/store/products/export', text: true }, options);
  }
  import(csv: Blob | string, options?: RequestOptions) {
    const file = typeof csv === 'string' ? new Blob([csv], { type: 'text/csv' }) : csv;
    return this.http.request<ResponseData<'importProducts'>>(
      { method: 'POST', path: '/store/products/import', form: fileForm(file, 'products.csv') },
      options,
    );
  }
}

export class Inventory extends Resource {
  /** Several stock changes, all or nothing. */
  update(body: RequestBody<'updateInventoryBatch'>, options?: RequestOptions) {
    return this.http.request<ResponseData<'updateInventoryBatch'>>(
      { method: 'POST', path: '/store/inventory', body },
      options,
    );
  }
}

export class Orders extends Resource {
  /** Sandbox: a customer places and pays an order. */
  simulate(body: RequestBody<'simulateOrder'>, options?: RequestOptions) {
    return this.http.request<Order>({ method: 'POST', path: '/store/orders/simulate', body }, options);
  }
  list(query?: QueryOf<'listOrders'>, options?: RequestOptions) {
    return this.paginate<'listOrders'>('/store/orders', query, options);
  }
  retrieve(referenceNumber: string, options?: RequestOptions) {
    return this.http.request<Order>({ method: 'GET', path: `/store/orders/${path(referenceNumber)}` }, options);
  }
  /** The order's payments, newest first. */
  payments(referenceNumber: string, query?: QueryOf<'listOrderPayments'>, options?: RequestOptions) {
    return this.paginate<'listOrderPayments'>(`/store/orders/${path(referenceNumber)}/payments`, query, options);
  }
  private action(referenceNumber: string, action: string, body: unknown, options?: RequestOptions) {
    return this.http.request<Order>(
      { method: 'POST', path: `/store/orders/${path(referenceNumber)}/${action}`, body },
      options,
    );
  }
  accept(referenceNumber: string, options?: RequestOptions) {
    return this.action(referenceNumber, 'accept', {}, options);
  }
  ready(referenceNumber: string, options?: RequestOptions) {
    return this.action(referenceNumber, 'ready', {}, options);
  }
  pickup(referenceNumber: string, options?: RequestOptions) {
    return this.action(referenceNumber, 'pickup', {}, options);
  }
  deliver(referenceNumber: string, options?: RequestOptions) {
    return this.action(referenceNumber, 'deliver', {}, options);
  }
  cancel(referenceNumber: string, body: RequestBody<'cancelOrder'>, options?: RequestOptions) {
    return this.action(referenceNumber, 'cancel', body, options);
  }
  refund(referenceNumber: string, body: RequestBody<'refundOrder'> = {}, options?: RequestOptions) {
    return this.action(referenceNumber, 'refund', body, options);
  }
  proposeModification(
    referenceNumber: string,
    body: RequestBody<'proposeOrderModification'>,
    options?: RequestOptions,
  ) {
    return this.action(referenceNumber, 'propose-modification', body, options);
  }
  /** Sandbox: the customer accepts the proposed modification. */
  acceptModification(referenceNumber: string, options?: RequestOptions) {
    return this.action(referenceNumber, 'modification/accept', {}, options);
  }
  /** Sandbox: the customer declines the proposed modification; the order stays as it was. */
  declineModification(referenceNumber: string, options?: RequestOptions) {
    return this.action(referenceNumber, 'modification/decline', {}, options);
  }
}

export class WebhookEndpoints extends Resource {
  create(body: RequestBody<'createWebhookEndpoint'>, options?: RequestOptions) {
    return this.http.request<WebhookEndpoint>({ method: 'POST', path: '/webhooks/endpoints', body }, options);
  }
  retrieve(id: string, options?: RequestOptions) {
    return this.http.request<WebhookEndpoint>({ method: 'GET', path: `/webhooks/endpoints/${path(id)}` }, options);
  }
  list(query?: QueryOf<'listWebhookEndpoints'>, options?: RequestOptions) {
    return this.paginate<'listWebhookEndpoints'>('/webhooks/endpoints', query, options);
  }
  update(id: string, body: RequestBody<'updateWebhookEndpoint'>, options?: RequestOptions) {
    return this.http.request<WebhookEndpoint>(
      { method: 'PATCH', path: `/webhooks/endpoints/${path(id)}`, body },
      options,
    );
  }
  del(id: string, options?: RequestOptions) {
    return this.http.request<ResponseData<'deleteWebhookEndpoint'>>(
      { method: 'DELETE', path: `/webhooks/endpoints/${path(id)}` },
      options,
    );
  }
  rotateSecret(id: string, options?: RequestOptions) {
    return this.http.request<WebhookEndpoint>(
      { method: 'POST', path: `/webhooks/endpoints/${path(id)}/rotate-secret`, body: {} },
      options,
    );
  }
  /** Sends a `ping` to this endpoint. */
  test(id: string, options?: RequestOptions) {
    return this.http.request<WebhookDeliveryDetail>(
      { method: 'POST', path: `/webhooks/endpoints/${path(id)}/test`, body: {} },
      options,
    );
  }
  recover(id: string, body: RequestBody<'recoverWebhookEndpoint'>, options?: RequestOptions) {
    return this.http.request<ResponseData<'recoverWebhookEndpoint'>>(
      { method: 'POST', path: `/webhooks/endpoints/${path(id)}/recover`, body },
      options,
    );
  }
  stats(id: string, options?: RequestOptions) {
    return this.http.request<ResponseData<'retrieveWebhookEndpointStats'>>(
      { method: 'GET', path: `/webhooks/endpoints/${path(id)}/stats` },
      options,
    );
  }
}

export class WebhookDeliveries extends Resource {
  list(query?: QueryOf<'listWebhookDeliveries'>, options?: RequestOptions) {
    return this.paginate<'listWebhookDeliveries'>('/webhooks/events', query, options);
  }
  retrieve(id: string, options?: RequestOptions) {
    return this.http.request<WebhookDeliveryDetail>({ method: 'GET', path: `/webhooks/events/${path(id)}` }, options);
  }
  retry(id: string, options?: RequestOptions) {
    return this.http.request<WebhookDeliveryDetail>(
      { method: 'POST', path: `/webhooks/events/${path(id)}/retry`, body: {} },
      options,
    );
  }
}

export class Events extends Resource {
  /** Newest first; with `after`, the events that follow it, oldest first. */
  list(query?: QueryOf<'listEvents'>, options?: RequestOptions) {
    return this.paginate<'listEvents'>('/events', query, options);
  }
  retrieve(id: string, options?: RequestOptions) {
    return this.http.request<Event>({ method: 'GET', path: `/events/${path(id)}` }, options);
  }
}

/**
 * The movements behind the balance, newest first (secret key, scope `balance:read`); with
 * `seller`, a seller's balance transactions instead.
 */
export class BalanceTransactions extends Resource {
  list(query?: QueryOf<'listBalanceTransactions'>, options?: RequestOptions) {
    return this.paginate<'listBalanceTransactions'>('/balance/transactions', query, options);
  }
  /** By its `txn_` id. */
  retrieve(id: string, options?: RequestOptions) {
    return this.http.request<BalanceTransaction>({ method: 'GET', path: `/balance/transactions/${path(id)}` }, options);
  }
  /** CSV text with a header row, newest first. */
  export(query?: QueryOf<'exportBalanceTransactions'>, options?: RequestOptions) {
    return this.http.request<string>(
      { method: 'GET', path: '/balance/transactions/export', query, text: true },
      options,
    );
  }
}

/** The balance's statements: a UTC month or any range of UTC days (scope `balance:read`). */
export class BalanceStatements extends Resource {
  /** A month's figures (`YYYY-MM`): opening and closing balance, totals by type, the count. A seller's: `sellers.statement`. */
  retrieve(month: string, options?: RequestOptions) {
    return this.http.request<BalanceStatement>({ method: 'GET', path: `/balance/statements/${path(month)}` }, options);
  }
  /** The figures of the UTC days `from` to `to`, both included (at most 366); a seller's with `seller`. */
  forRange(query: { from: string; to: string; seller?: string }, options?: RequestOptions) {
    return this.http.request<BalanceStatement>({ method: 'GET', path: '/balance/statements', query }, options);
  }
  /** A month's statement as a file: the CSV text, or the printable HTML page, in `lang`. */
  download(
    month: string,
    query: { format: 'csv' | 'html'; lang?: 'en' | 'fr' | 'ar'; seller?: string },
    options?: RequestOptions,
  ) {
    return this.http.request<string>(
      { method: 'GET', path: `/balance/statements/${path(month)}`, query, text: true },
      options,
    );
  }
}

export class BalanceResource extends Resource {
  readonly transactions = new BalanceTransactions(this.http);
  readonly statements = new BalanceStatements(this.http);

  retrieve(options?: RequestOptions) {
    return this.http.request<Balance>({ method: 'GET', path: '/balance' }, options);
  }
}

/**
 * Money out of the balance to wallets (secret key, scopes `payouts:read` / `payouts:write`). The
 * fee is taken on top of the amount; the worker sends a PENDING payout within about a second.
 */
export class Payouts extends Resource {
  /**
   * One payout; 402 INSUFFICIENT_FUNDS when the balance cannot cover amount + fee. With `seller`,
   * paid from that seller's balance to its phone (`destination` may be left out).
   */
  create(body: PayoutInput, options?: RequestOptions) {
    return this.http.request<Payout>({ method: 'POST', path: '/payouts', body }, options);
  }
  /**
   * Up to 1,000 payouts, all or nothing: each item becomes its own payout, in the order given. A
   * refusal names every bad item at once (`details`, each with its item's field and code).
   */
  createBatch(items: RequestBody<'createPayoutBatch'>['items'], options?: RequestOptions) {
    return this.http.request<CreatedPayoutBatch>(
      { method: 'POST', path: '/payouts/batches', body: { items } },
      options,
    );
  }
  /** By its `PO-` reference. */
  retrieve(referenceNumber: string, options?: RequestOptions) {
    return this.http.request<Payout>({ method: 'GET', path: `/payouts/${path(referenceNumber)}` }, options);
  }
  /** Newest first (a batch's in item order with `batch`). */
  list(query?: QueryOf<'listPayouts'>, options?: RequestOptions) {
    return this.paginate<'listPayouts'>('/payouts', query, options);
  }
  /** A PENDING payout only; otherwise PAYOUT_NOT_PENDING. */
  cancel(referenceNumber: string, options?: RequestOptions) {
    return this.http.request<Payout>(
      { method: 'POST', path: `/payouts/${path(referenceNumber)}/cancel`, body: {} },
      options,
    );
  }
  /** The balance transactions the payout settles (for an item of a batch, the batch's), newest first. */
  transactions(referenceNumber: string, query?: QueryOf<'listPayoutTransactions'>, options?: RequestOptions) {
    return this.paginate<'listPayoutTransactions'>(`/payouts/${path(referenceNumber)}/transactions`, query, options);
  }
  /** A batch by its `pob_` id, with its payouts counted by status. */
  retrieveBatch(id: string, options?: RequestOptions) {
    return this.http.request<PayoutBatch>({ method: 'GET', path: `/payouts/batches/${path(id)}` }, options);
  }
}
