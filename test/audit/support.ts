import type { AuditAction } from '../../src/modules/audit/actions.js';
import type { Environment } from '../../src/db/schema.js';
import { issueKey } from '../../src/modules/businesses/keys.js';
import type { TestApp } from '../support/harness.js';

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

/**
 * A secret key that reads the audit log (`audit:read` is never a default scope, decision 085),
 * issued as a fixture: made through the operator API it would be an act, with its own entry.
 */
export async function auditReader(t: TestApp, businessId: string, environment: Environment = 'test'): Promise<string> {
  const key = await issueKey(t.runtime.db, {
    businessId,
    kind: 'secret',
    environment,
    name: 'Audit reader',
    scopes: ['audit:read'],
  });
  return key.key;
}
