import { sql, type RawBuilder } from 'kysely';
import type { Environment } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';

/**
 * The merchant's name as payers see it (the wallet app, the operator's notices to payers): in live
 * mode the name the operator verified at live approval (`businesses.verified_name`, migration 040),
 * which a merchant's rename does not change; in the sandbox, where nobody is verified, the
 * business's own name, which the payer's screen marks as not verified. Written once here, as SQL
 * so a query reads it in the same statement, and as a function for one business.
 */
export interface PayerName {
  name: string;
  /** False: show it marked "not verified" (a sandbox business, or a live one without a verified name). */
  verified: boolean;
}

/**
 * The SQL of the name payers see and whether it is verified, for the businesses row aliased
 * `business` in `environment` (an SQL expression such as `sql.ref('r.environment')`, or a value).
 */
export function payerNameSql(
  business: string,
  environment: RawBuilder<unknown> | Environment,
): { name: RawBuilder<string>; verified: RawBuilder<boolean> } {
  const env = typeof environment === 'string' ? sql`${environment}::text` : environment;
  const verified = sql<boolean>`(${env} = 'live' AND ${sql.ref(`${business}.verified_name`)} IS NOT NULL)`;
  return {
    name: sql<string>`(CASE WHEN ${verified} THEN ${sql.ref(`${business}.verified_name`)} ELSE ${sql.ref(`${business}.name`)} END)`,
    verified,
  };
}

/** The name payers see of one business in `environment`; undefined when there is no such business. */
export async function payerName(
  db: Executor,
  businessId: string,
  environment: Environment,
): Promise<PayerName | undefined> {
  const shown = payerNameSql('b', environment);
  const result = await sql<PayerName>`SELECT ${shown.name} AS name, ${shown.verified} AS verified
    FROM businesses b WHERE b.id = ${businessId}`.execute(db);
  return result.rows[0];
}
