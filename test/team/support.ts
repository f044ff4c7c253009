import type { AuditAction } from '../../src/modules/audit/actions.js';
import type { TestApp } from '../support/harness.js';

export const TEAM = '/dashboard/team';

/** The business's audit entries, oldest first (what the team's acts must have written). */
export async function auditOf(t: TestApp, businessId: string, action?: AuditAction) {
  let query = t.runtime.db.selectFrom('audit_log').selectAll().where('business_id', '=', businessId);
  if (action) query = query.where('action', '=', action);
  return query.orderBy('seq').execute();
}

export function userByEmail(t: TestApp, email: string) {
  return t.runtime.db.selectFrom('dashboard_users').selectAll().where('email', '=', email).executeTakeFirst();
}

/** The one-time link a Team page answer shows, or undefined. */
export function invitationLinkIn(html: string): string | undefined {
  return /id="invitation-link" readonly dir="ltr" value="([^"]+)"/.exec(html)?.[1];
}

let counter = 0;
export function freshEmail(label: string): string {
  return `${label}-${++counter}-${process.pid}-${Date.now()}@example.com`;
}
