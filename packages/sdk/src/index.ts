import { ApiKeys } from './api-keys.js';
import { HttpClient, type CommerceOptions } from './client.js';
import {
  BalanceResource,
  Events,
  Intents,
  Inventory,
  Orders,
  Payments,
  Payouts,
  Products,
  WebhookDeliveries,
  WebhookEndpoints,
} from './resources.js';
import { AuditLog } from './audit-log.js';
import { PaymentLinks, PaymentRequests } from './links.js';
import { Sellers } from './sellers.js';
import { verifyWebhook, type HeaderBag, type VerifyOptions, type WebhookEvent } from './webhooks.js';

export * from './errors.js';
export type { CommerceOptions, Page, RequestOptions } from './client.js';
export { PageList } from './client.js';
export type * from './resources.js';
export type * from './types.js';
export type * from './links.js';
export type * from './sellers.js';
export type * from './audit-log.js';
export type * from './api-keys.js';
export type { HeaderBag, VerifyOptions, WebhookEvent, WebhookEventName, WebhookEventOf } from './webhooks.js';
export { signPayload, verifyWebhook } from './webhooks.js';
export type { components, operations, paths, webhooks as WebhookPayloads } from './generated/openapi.js';

/** The client of the Commerce Developer API. */
export class Commerce {
  readonly intents: Intents;
  readonly payments: Payments;
  readonly products: Products;
  readonly inventory: Inventory;
  readonly orders: Orders;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly webhookDeliveries: WebhookDeliveries;
  readonly events: Events;
  readonly balance: BalanceResource;
  readonly payouts: Payouts;
  readonly paymentLinks: PaymentLinks;
  readonly paymentRequests: PaymentRequests;
  readonly sellers: Sellers;
  readonly auditLog: AuditLog;
  readonly apiKeys: ApiKeys;
  readonly webhooks = {
    /** Checks a delivery's signature and timestamp and returns its typed event; throws WebhookVerificationError. */
    verify: (rawBody: string | Uint8Array, headers: HeaderBag, secret: string, options?: VerifyOptions) =>
      verifyWebhook(rawBody, headers, secret, options),
  };

  constructor(apiKey: string, options: CommerceOptions = {}) {
    const http = new HttpClient(apiKey, options);
    this.intents = new Intents(http);
    this.payments = new Payments(http);
    this.products = new Products(http);
    this.inventory = new Inventory(http);
    this.orders = new Orders(http);
    this.webhookEndpoints = new WebhookEndpoints(http);
    this.webhookDeliveries = new WebhookDeliveries(http);
    this.events = new Events(http);
    this.balance = new BalanceResource(http);
    this.payouts = new Payouts(http);
    this.paymentLinks = new PaymentLinks(http);
    this.paymentRequests = new PaymentRequests(http);
    this.sellers = new Sellers(http);
    this.auditLog = new AuditLog(http);
    this.apiKeys = new ApiKeys(http);
  }
}

export type { WebhookEvent as Webhook };
export default Commerce;
