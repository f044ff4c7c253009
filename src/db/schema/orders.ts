import type { ColumnType, Generated } from 'kysely';
import type { Environment } from './columns.js';
import type { RevenueModel } from './payments.js';
import type { SplitShareRecord } from './sellers.js';

/** Every status of an order: the one list the table type, schemas and filters derive from. */
export const ORDER_STATUSES = ['NEW', 'PREPARING', 'READY', 'PICKED_UP', 'DELIVERED', 'CANCELLED', 'REFUNDED'] as const;

export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** An order line as bought: the product's name and prices at order time. */
export interface OrderItem {
  productId: string;
  name: string;
  quantity: number;
  price: number;
  variant?: { _id: string; label: string; priceAdjustment: number };
  options?: { _id: string; name: string; priceAdjustment: number }[];
}
export interface OrderRefund {
  id: string;
  amount: number;
  /** Why: the cancellation reason for a cancel's refund, else the merchant's own or null. */
  reason?: string | null;
  createdAt: string;
  /** null only on refunds recorded before orders moved money. */
  ledgerTransactionId?: string | null;
}
/** A modification's settled difference: positive charged to the wallet, negative refunded. */
export interface OrderAdjustment {
  id: string;
  amount: number;
  createdAt: string;
  ledgerTransactionId: string;
}
/** The order's payment record, as the order's JSON shows it. */
export interface OrderPayment {
  id: string;
  /** Paid for the goods, net of accepted modifications. */
  amountPaid: number;
  payerFee: number;
  method: 'WALLET';
  payerPhone: string;
  paidAt: string;
  ledgerTransactionId: string;
  adjustments: OrderAdjustment[];
}
/**
 * The fees of an order's payments, kept so its refunds return the provider fee in proportion as
 * intent refunds do (decisions: Refunds, Commission): the plan at payment time, the amounts
 * charged and their provider fee, what was returned so far and of which provider fee (payments/fees.ts
 * `FeeState`).
 */
export interface OrderFees {
  providerBps: number;
  tofBps: number;
  tteBps: number;
  revenueModel?: RevenueModel;
  marginBps?: number;
  charged: number;
  providerTtc: number;
  payerTtc: number;
  tof: number;
  tte: number;
  returned: number;
  providerReturned: number;
  tofReturned: number;
  tteReturned: number;
}
export interface OrderHistoryEntry {
  status: OrderStatus;
  previousStatus: OrderStatus | null;
  at: string;
}
export interface ProposedModification {
  items: OrderItem[];
  totalAmount: number;
  proposedAt: string;
}

export interface OrdersTable {
  id: Generated<number>;
  reference_number: string;
  shop_id: string;
  business_id: string;
  environment: Environment;
  status: OrderStatus;
  items: ColumnType<OrderItem[], string, string>;
  total_amount: number;
  customer_name: string;
  customer_phone: string;
  paid: boolean;
  total_amount_refunded: Generated<number>;
  refunds: ColumnType<OrderRefund[], string | undefined, string>;
  cancellation_reason: string | null;
  history: ColumnType<OrderHistoryEntry[], string, string>;
  proposed_modification: ColumnType<ProposedModification | null, string | null | undefined, string | null>;
  customer_ref: string;
  payer_wallet_id: string | null;
  amount_paid: Generated<number>;
  payment: ColumnType<OrderPayment | null, string | null | undefined, string | null>;
  fees: ColumnType<OrderFees | null, string | null | undefined, string | null>;
  /** What the order's payment gave each seller of its lines' products (migration 047). */
  split_shares: ColumnType<SplitShareRecord[] | null, string | null | undefined, string | null>;
  created_at: Date;
  updated_at: Date;
}
