/**
 * Every act the audit log records (issue 53 item 4, decision 083): the one list the API's
 * `action` filter, the Activity page's words and the tests derive from. Named `<object>.<verb>`
 * in the past tense, like events.
 */
export const AUDIT_ACTIONS = [
  // Signing in and the team.
  'user.signed_in',
  'user.sign_in_failed',
  'user.password_changed',
  'user.invited',
  'user.invitation_revoked',
  'user.joined',
  'user.role_changed',
  'user.removed',
  // API keys and webhook endpoints.
  'api_key.created',
  'api_key.rolled',
  'api_key.revoked',
  'api_key.suspended',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  // Money.
  'refund.created',
  'payout.created',
  'payout.cancelled',
  'payout_batch.created',
  // Sellers and links.
  'seller.created',
  'seller.updated',
  'payment_link.created',
  'payment_link.updated',
  // The business.
  'settings.updated',
  'shop_contact.updated',
  'live_access.requested',
  // The operator's acts on the business.
  'business.fees_changed',
  'business.live_approved',
  'business.live_revoked',
  'business.suspended',
  'business.reinstated',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function isAuditAction(value: string): value is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}

/**
 * The acts that belong to no mode (the team, the business's settings, the operator's acts on the
 * business): recorded with `environment` null, and listed by the API in both modes.
 */
const MODELESS_PREFIXES = ['user.', 'settings.', 'shop_contact.', 'live_access.', 'business.'] as const;

export function isModelessAction(action: AuditAction): boolean {
  return MODELESS_PREFIXES.some((prefix) => action.startsWith(prefix));
}
