import type { operations } from './generated/openapi.js';

/** Types of each operation, from the OpenAPI document (a route change fails compilation here). */
type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
export type RequestBody<K extends keyof operations> = operations[K] extends { requestBody?: infer R }
  ? JsonOf<NonNullable<R>>
  : never;
export type QueryOf<K extends keyof operations> = operations[K]['parameters'] extends { query?: infer Q }
  ? NonNullable<Q>
  : never;
type SuccessOf<R> = 200 extends keyof R ? JsonOf<R[200]> : 201 extends keyof R ? JsonOf<R[201]> : never;
export type ResponseData<K extends keyof operations> =
  SuccessOf<operations[K]['responses']> extends { data: infer Data } ? Data : never;
export type ItemOf<K extends keyof operations> = ResponseData<K> extends { items: (infer Item)[] } ? Item : never;

export type Intent = ResponseData<'retrieveIntent'>;
export type CreatedIntent = ResponseData<'createIntent'>;
export type Product = ResponseData<'retrieveProduct'>;
export type Order = ResponseData<'retrieveOrder'>;
export type Payment = ResponseData<'retrievePayment'>;
export type WebhookEndpoint = ResponseData<'retrieveWebhookEndpoint'>;
export type WebhookDelivery = ItemOf<'listWebhookDeliveries'>;
export type WebhookDeliveryDetail = ResponseData<'retrieveWebhookDelivery'>;
export type Event = ResponseData<'retrieveEvent'>;
export type Balance = ResponseData<'retrieveBalance'>;
export type BalanceTransaction = ResponseData<'retrieveBalanceTransaction'>;
export type BalanceStatement = ResponseData<'retrieveBalanceStatement'>;
export type Payout = ResponseData<'retrievePayout'>;
export type PayoutBatch = ResponseData<'retrievePayoutBatch'>;
export type CreatedPayoutBatch = ResponseData<'createPayoutBatch'>;
export type PayoutInput = RequestBody<'createPayout'>;
export type PaymentLink = ResponseData<'retrievePaymentLink'>;
export type PaymentLinkInput = RequestBody<'createPaymentLink'>;
export type PaymentLinkUpdate = RequestBody<'updatePaymentLink'>;
export type PaymentRequest = ResponseData<'retrievePaymentRequest'>;
export type PaymentRequestInput = RequestBody<'createPaymentRequest'>;
export type Seller = ResponseData<'retrieveSeller'>;
export type SellerInput = RequestBody<'createSeller'>;
export type SellerUpdate = RequestBody<'updateSeller'>;
export type AuditEntry = ItemOf<'listAuditLog'>;
export type ApiKey = ItemOf<'listApiKeys'>;
export type NewApiKey = ResponseData<'createApiKey'>;
export type ApiKeyInput = RequestBody<'createApiKey'>;
export type ApiKeyRoll = RequestBody<'rollApiKey'>;
