import type { EndpointDisabledReason, KeyListStatus, PaymentRequestStatus, ProductStatus } from '../../db/schema.js';
import type { Dictionary } from './i18n.js';
import { INTENT_STATUSES, type IntentStatus } from '../intents/state.js';
import { ORDER_STATUSES, type OrderStatus } from '../orders/state.js';
import type { PaymentFailureCode, PaymentMethodName, PaymentStatus } from '../payments/state.js';
import { DELIVERY_STATUSES, type DeadReason, type DeliveryStatus } from '../webhooks/delivery-state.js';

/**
 * What the badge of a REFUNDED payment or order says when only part of what was paid went back: the
 * dashboard's own word (the badge's class), while the API's status, and the badge's `data-status`,
 * stay REFUNDED (a refund of any part moves it there; decision 004's statuses are unchanged).
 */
export const PARTLY_REFUNDED = 'PARTLY_REFUNDED';

/** The status a badge draws: PARTLY_REFUNDED for a REFUNDED one with 0 < refunded < paid, else the status. */
export function badgeStatus(status: string, paid: number | null, refunded: number): string {
  return status === 'REFUNDED' && paid !== null && refunded > 0 && refunded < paid ? PARTLY_REFUNDED : status;
}

/**
 * The word the pages show for each status of each vocabulary the dashboard draws as a badge (the
 * status itself stays the badge's class and `data-status`), and for a payment's method and failure. The compiler refuses a status of a
 * vocabulary without its word here. Payouts name theirs in payout-routes.ts.
 */
const STATUS_WORDS = {
  intent: {
    PENDING: 'intentPending',
    PAID: 'intentPaid',
    REFUNDED: 'intentRefunded',
    PARTLY_REFUNDED: 'intentPartlyRefunded',
    CANCELLED: 'intentCancelled',
    FAILED: 'intentFailed',
  } satisfies Record<IntentStatus | typeof PARTLY_REFUNDED, keyof Dictionary>,
  order: {
    NEW: 'orderStatusNew',
    PREPARING: 'orderStatusPreparing',
    READY: 'orderStatusReady',
    PICKED_UP: 'orderStatusPickedUp',
    DELIVERED: 'orderStatusDelivered',
    CANCELLED: 'orderStatusCancelled',
    REFUNDED: 'orderStatusRefunded',
    PARTLY_REFUNDED: 'orderStatusPartlyRefunded',
  } satisfies Record<OrderStatus | typeof PARTLY_REFUNDED, keyof Dictionary>,
  payment: {
    PROCESSING: 'paymentProcessing',
    SUCCEEDED: 'paymentSucceeded',
    FAILED: 'paymentFailed',
  } satisfies Record<PaymentStatus, keyof Dictionary>,
  paymentMethod: {
    WALLET_PIN: 'methodWalletPin',
    SANDBOX: 'methodSandbox',
    WALLET_REQUEST: 'methodWalletRequest',
  } satisfies Record<PaymentMethodName, keyof Dictionary>,
  paymentFailure: {
    INSUFFICIENT_BALANCE: 'failureInsufficientBalance',
    SANDBOX_DECLINED: 'failureSandboxDeclined',
    SIMULATED_FAILURE: 'failureSimulated',
    INVALID_PIN: 'failureInvalidPin',
    WALLET_LOCKED: 'failureWalletLocked',
    DECLINED: 'failureDeclined',
    TIMED_OUT: 'failureTimedOut',
    NOT_PAYABLE: 'failureNotPayable',
    CANCELLED: 'failureCancelled',
  } satisfies Record<PaymentFailureCode, keyof Dictionary>,
  paymentRequest: {
    PENDING: 'requestPending',
    APPROVED: 'requestApproved',
    DECLINED: 'requestDeclined',
    EXPIRED: 'requestExpired',
    CANCELLED: 'requestCancelled',
    FAILED: 'requestFailed',
  } satisfies Record<PaymentRequestStatus, keyof Dictionary>,
  delivery: {
    PENDING: 'deliveryPending',
    SUCCEEDED: 'deliverySucceeded',
    FAILED: 'deliveryFailed',
    DEAD: 'deliveryDead',
  } satisfies Record<DeliveryStatus, keyof Dictionary>,
  deadReason: {
    MAX_ATTEMPTS: 'deadReasonMaxAttempts',
    ENDPOINT_DISABLED: 'deadReasonEndpointDisabled',
    ENDPOINT_DELETED: 'deadReasonEndpointDeleted',
  } satisfies Record<DeadReason, keyof Dictionary>,
  product: { ACTIVE: 'productActive', DISABLED: 'productDisabled' } satisfies Record<ProductStatus, keyof Dictionary>,
  key: {
    active: 'keyActive',
    suspended: 'keySuspended',
    revoked: 'keyRevoked',
    rotated: 'keyRotated',
    expired: 'keyExpired',
  } satisfies Record<KeyListStatus, keyof Dictionary>,
  endpointDisabled: {
    FAILING: 'endpointDisabledFailing',
    MANUAL: 'endpointDisabledManual',
  } satisfies Record<EndpointDisabledReason, keyof Dictionary>,
} as const;

export type StatusVocabulary = keyof typeof STATUS_WORDS;

/** The lists the filters offer, in their vocabulary's order. */
export const STATUS_LISTS = {
  intent: INTENT_STATUSES,
  order: ORDER_STATUSES,
  delivery: DELIVERY_STATUSES,
} as const;

/**
 * A status in the page's language; a value outside its vocabulary (which a page should never
 * hold) is shown as it is rather than hidden.
 */
export function statusText(t: Dictionary, vocabulary: StatusVocabulary, status: string): string {
  const words: Readonly<Record<string, keyof Dictionary>> = STATUS_WORDS[vocabulary];
  return Object.hasOwn(words, status) ? t[words[status]!] : status;
}
