import { sql } from 'kysely';
import type { Environment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { payerName, payerNameSql } from '../businesses/payer-name.js';

/** The wallet whose pages are drawn: its phone in one environment. */
export interface WalletOwner {
  walletId: string;
  phone: string;
  environment: Environment;
}

/**
 * A pending request as the payer sees it: who asks (the name the operator verified, in live mode;
 * in the sandbox the business's own name, not verified), how much, why, until when.
 */
export interface PendingRequest {
  id: string;
  businessId: string;
  merchantName: string;
  /** False: the name is the business's own, shown marked "not verified" (the sandbox). */
  merchantVerified: boolean;
  amount: number;
  message: string | null;
  intentReference: string;
  expiresAt: Date;
  createdAt: Date;
}

/** The wallet's requests still waiting for an answer (and not yet due), newest first. */
export async function pendingRequests(db: Executor, owner: WalletOwner): Promise<PendingRequest[]> {
  const shown = payerNameSql('b', sql.ref('r.environment'));
  const result = await sql<{
    id: string;
    business_id: string;
    merchant_name: string;
    merchant_verified: boolean;
    amount: string | number;
    message: string | null;
    intent_reference: string;
    expires_at: Date;
    created_at: Date;
  }>`SELECT r.id, r.business_id, ${shown.name} AS merchant_name, ${shown.verified} AS merchant_verified,
      r.amount, r.message,
      i.reference_number AS intent_reference, r.expires_at, r.created_at
    FROM payment_requests r
    JOIN businesses b ON b.id = r.business_id
    JOIN payment_intents i ON i.id = r.intent_id
    WHERE r.environment = ${owner.environment} AND r.phone = ${owner.phone} AND r.status = 'PENDING'
      AND r.expires_at > now()
    ORDER BY r.created_at DESC, r.id DESC`.execute(db);
  return result.rows.map((row) => ({
    id: row.id,
    businessId: row.business_id,
    merchantName: row.merchant_name,
    merchantVerified: row.merchant_verified,
    amount: Number(row.amount),
    message: row.message,
    intentReference: row.intent_reference,
    expiresAt: new Date(row.expires_at),
    createdAt: new Date(row.created_at),
  }));
}

/** The newest request made to this wallet, whatever its state: the event stream watches it change. */
export async function newestRequestId(db: Executor, owner: WalletOwner): Promise<string | null> {
  // Pending only: a new request is pending, and the wallet's pending requests have their own index.
  const result = await sql<{ id: string }>`SELECT id FROM payment_requests
    WHERE environment = ${owner.environment} AND phone = ${owner.phone} AND status = 'PENDING'
    ORDER BY created_at DESC LIMIT 1`.execute(db);
  return result.rows[0]?.id ?? null;
}

/** A business's name as this wallet's payer sees it (its notices, its mute list). */
export async function merchantName(
  db: Executor,
  businessId: string,
  environment: Environment,
): Promise<string | undefined> {
  return (await payerName(db, businessId, environment))?.name;
}

/** The businesses this wallet muted, by name. */
export async function mutedMerchants(
  db: Executor,
  owner: WalletOwner,
): Promise<{ businessId: string; name: string }[]> {
  const shown = payerNameSql('b', sql.ref('m.environment'));
  const result = await sql<{ business_id: string; name: string }>`SELECT m.business_id, ${shown.name} AS name
    FROM merchant_mutes m JOIN businesses b ON b.id = m.business_id
    WHERE m.environment = ${owner.environment} AND m.phone = ${owner.phone}
    ORDER BY 2, m.business_id`.execute(db);
  return result.rows.map((row) => ({ businessId: row.business_id, name: row.name }));
}
