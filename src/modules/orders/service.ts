/*
 * The orders module as routes and other modules call it. Each function lives in the file named
 * for its job: pricing.ts, placement.ts (place and pay), workflow.ts (the status steps and
 * cancel), refunds.ts, modifications.ts, reads.ts (find, lock, list), views.ts and events.ts.
 * Money moves through payments/order-payments.ts; stock through products/stock.ts.
 */
export type { Caller, ChangedOrder, OrderLocator, OrderRow } from './model.js';
export { lineTotal, orderTotal, priceItems, type RequestedItem } from './pricing.js';
export { placeOrder, simulateOrder, type OrderShop, type PlaceOrderInput } from './placement.js';
export { transitionOrder } from './workflow.js';
export { refundableAmount, refundOrder } from './refunds.js';
export { acceptModification, declineModification, proposeModification } from './modifications.js';
export { getOrder, listOrderPayments, listOrders, shopNames } from './reads.js';
export { customerUrl, orderView } from './views.js';
