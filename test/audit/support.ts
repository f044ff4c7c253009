import type { AuditAction } from '../../src/modules/audit/actions.js';
import type { Environment } from '../../src/db/schema.js';
import { expectStatus, type TestApp } from '../support/harness.js';

export const AUDIT_LOG = '/api/v1/dev/audit-log';

/** The entries of one act on a business, as stored, oldest first. */
export function entriesOf(t: TestApp, businessId: string, action: AuditAction) {
  return t.runtime.db
    .selectFrom('audit_log')
    .selectAll()
    .where('business_id', '=', businessId)
    .where('action', '=', action)
    .orderBy('seq')
    .execute();
}

/** How many entries a business has, of every act. */
export async function entryCount(t: TestApp, businessId: string): Promise<number> {
  const row = await t.runtime.db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('business_id', '=', businessId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A secret key that reads the audit log: `audit:read` is never a default scope (decision 085). */
export async function auditReader(t: TestApp, businessId: string, environment: Environment = 'test'): Promise<string> {
  const made = await t.admin('POST', '/keys', { businessId, kind: 'secret', environment, scopes: ['audit:read'] });
  expectStatus(made, 201);
  return made.body.data.key as string;
}
