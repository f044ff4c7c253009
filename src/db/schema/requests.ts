import type { Environment } from './columns.js';

/** Every status of a payment request: the one list the table type, schemas and events derive from. */
export const PAYMENT_REQUEST_STATUSES = ['PENDING', 'APPROVED', 'DECLINED', 'EXPIRED', 'CANCELLED', 'FAILED'] as const;

export type PaymentRequestStatus = (typeof PAYMENT_REQUEST_STATUSES)[number];

/**
 * How a request ends without moving money: declined, expired, cancelled, or approved but its
 * payment failed. Retention deletes these (an APPROVED one is a money record, kept); migration
 * 057's partial index repeats the list.
 */
export const UNPAID_REQUEST_ENDS = ['DECLINED', 'EXPIRED', 'CANCELLED', 'FAILED'] as const satisfies readonly Exclude<
  PaymentRequestStatus,
  'PENDING' | 'APPROVED'
>[];

export interface PaymentRequestsTable {
  id: string;
  business_id: string;
  environment: Environment;
  intent_id: number;
  payment_id: string;
  phone: string;
  amount: number;
  message: string | null;
  status: PaymentRequestStatus;
  /** Why an approved request's payment failed (a payment failure code); set with FAILED only. */
  failure_code: string | null;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
  ended_at: Date | null;
}

export interface MerchantMutesTable {
  environment: Environment;
  phone: string;
  business_id: string;
  created_at: Date;
}

/**
 * A notice to the operator's notification hook (decision 078): PENDING until sent (SENT), given up
 * after the last attempt (FAILED), or dropped because its request ended or its time was up before
 * it could go out (EXPIRED). The migration's CHECK repeats it.
 */
export const OPERATOR_NOTICE_STATUSES = ['PENDING', 'SENT', 'FAILED', 'EXPIRED'] as const;

export type OperatorNoticeStatus = (typeof OPERATOR_NOTICE_STATUSES)[number];

export interface OperatorNoticesTable {
  id: string;
  request_id: string;
  environment: Environment;
  /** The JSON sent, written once: every attempt signs the same bytes. */
  body: string;
  status: OperatorNoticeStatus;
  attempts: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  sent_at: Date | null;
}
