import type { RequestOptions } from './client.js';
import { path, Resource } from './resource.js';
import type { PaymentLink, PaymentLinkInput, PaymentLinkUpdate, PaymentRequest, QueryOf } from './types.js';

/**
 * Payment links (secret key, scopes `intents:write` / `intents:read`): one page, shared or printed,
 * that many payers pay. Each payment through a link is an intent of its own, with `paymentLink`.
 */
export class PaymentLinks extends Resource {
  /** A FIXED `amount`, or an OPEN one between `minAmount` and `maxAmount`; VALIDATION_ERROR names a bad field. */
  create(body: PaymentLinkInput, options?: RequestOptions) {
    return this.http.request<PaymentLink>({ method: 'POST', path: '/payment-links', body }, options);
  }
  /** By its `PL-` reference. */
  retrieve(referenceNumber: string, options?: RequestOptions) {
    return this.http.request<PaymentLink>({ method: 'GET', path: `/payment-links/${path(referenceNumber)}` }, options);
  }
  /** Newest first; filter `status`. */
  list(query?: QueryOf<'listPaymentLinks'>, options?: RequestOptions) {
    return this.paginate<'listPaymentLinks'>('/payment-links', query, options);
  }
  /** PATCH: only the fields sent change; `active: false` deactivates, `true` reactivates. */
  update(referenceNumber: string, body: PaymentLinkUpdate, options?: RequestOptions) {
    return this.http.request<PaymentLink>(
      { method: 'PATCH', path: `/payment-links/${path(referenceNumber)}`, body },
      options,
    );
  }
  /** The intents paid through the link, newest first. */
  intents(referenceNumber: string, query?: QueryOf<'listPaymentLinkIntents'>, options?: RequestOptions) {
    return this.paginate<'listPaymentLinkIntents'>(`/payment-links/${path(referenceNumber)}/intents`, query, options);
  }
}

/**
 * Payment requests by their `PR-` id (secret key): made with `intents.requests.create`, answered
 * by the payer in the wallet app, ended by expiry or by `cancel`.
 */
export class PaymentRequests extends Resource {
  retrieve(id: string, options?: RequestOptions) {
    return this.http.request<PaymentRequest>({ method: 'GET', path: `/payment-requests/${path(id)}` }, options);
  }
  /** A PENDING request only: CANCELLED, nothing moved; otherwise PAYMENT_REQUEST_NOT_PENDING. */
  cancel(id: string, options?: RequestOptions) {
    return this.http.request<PaymentRequest>(
      { method: 'POST', path: `/payment-requests/${path(id)}/cancel`, body: {} },
      options,
    );
  }
}
