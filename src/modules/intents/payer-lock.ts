import { sql, type Selectable, type Transaction } from 'kysely';
import type { DB, Environment, WalletsTable } from '../../db/schema.js';
import { LOCKED_PAYER, type Payer } from '../payments/payers.js';
import type { LockedIntent } from './repo.js';

type IntentAndPayerRow = LockedIntent & {
  [Column in keyof Selectable<WalletsTable> as `wallet_${Column}`]: Selectable<WalletsTable>[Column] | null;
} & { wallet_available: number | null };

/**
 * What `lockPayer` after `repo.lockIntent` does, in one statement and in that lock order: the
 * intent found by `where` is locked by its subquery before the lateral subquery that depends on
 * it locks the payer's wallet in the intent's environment (only when the intent is `owner`'s, if
 * given). `payer` is undefined when the phone has no wallet there.
 */
export async function lockIntentAndPayer(
  trx: Transaction<DB>,
  where: { referenceNumber: string } | { id: number },
  payer: { phone: string; owner?: { businessId: string; environment: Environment } },
): Promise<{ intent: LockedIntent; payer: Payer | undefined } | undefined> {
  const found = 'referenceNumber' in where ? sql`reference_number = ${where.referenceNumber}` : sql`id = ${where.id}`;
  const result = await sql<IntentAndPayerRow>`
    SELECT i.*, f.provider_bps AS plan_provider_bps, f.payer_fee AS plan_payer_fee, f.tof_bps AS plan_tof_bps,
      f.tte_bps AS plan_tte_bps, p.id AS wallet_id, p.environment AS wallet_environment, p.phone AS wallet_phone,
      p.pin_hash AS wallet_pin_hash, p.status AS wallet_status, p.failed_pin_attempts AS wallet_failed_pin_attempts,
      p.locked_until AS wallet_locked_until, p.last_pin_attempt_at AS wallet_last_pin_attempt_at,
      p.created_at AS wallet_created_at, p.available AS wallet_available
    FROM (SELECT * FROM payment_intents WHERE ${found} FOR UPDATE) i
    LEFT JOIN fee_plans f ON f.business_id = i.business_id
    LEFT JOIN LATERAL (${LOCKED_PAYER(
      sql`i.environment`,
      payer.phone,
      payer.owner === undefined
        ? sql`true`
        : sql`i.business_id = ${payer.owner.businessId} AND i.environment = ${payer.owner.environment}`,
    )}) p ON true`.execute(trx);
  const row = result.rows[0];
  if (!row) return undefined;
  const {
    wallet_id: id,
    wallet_environment: environment,
    wallet_phone: phone,
    wallet_pin_hash: pinHash,
    wallet_status: status,
    wallet_failed_pin_attempts: failedPinAttempts,
    wallet_locked_until: lockedUntil,
    wallet_last_pin_attempt_at: lastPinAttemptAt,
    wallet_created_at: createdAt,
    wallet_available: available,
    ...intent
  } = row;
  return {
    intent,
    payer:
      id === null || environment === null || phone === null || pinHash === null || status === null
        ? undefined
        : {
            wallet: {
              id,
              environment,
              phone,
              pin_hash: pinHash,
              status,
              failed_pin_attempts: Number(failedPinAttempts),
              locked_until: lockedUntil,
              last_pin_attempt_at: lastPinAttemptAt,
              created_at: createdAt!,
            },
            available: Number(available),
          },
  };
}
