import type { DashboardRole, Environment } from '../../db/schema.js';
import { allScopes, type Scope } from '../keys/scopes.js';

/**
 * What a business's team may do (issue 53, decision 083): each permission once, and the one table
 * of which role holds it. The dashboard's routes and forms declare the permission they need
 * (`config.dashboard`), docs/dashboard.md shows this table, and the matrix test walks it.
 */
export const PERMISSIONS = [
  /** Payments, orders, links, requests, sellers and the catalog, read only. */
  'payments.read',
  /** The balance, its transactions and statements, payouts and batches. */
  'balance.read',
  /** Create payments (a payment request, a payment intent from the dashboard). */
  'payments.create',
  'payments.refund',
  'payouts.create',
  'sellers.manage',
  'links.manage',
  'catalog.manage',
  'orders.manage',
  /** API keys and webhook endpoints. */
  'developers.manage',
  /** Invite, change roles, remove members. */
  'team.manage',
  /** The business's settings, shop contact and live-access request. */
  'settings.manage',
  /** The audit log (the Activity page and `GET /audit-log`'s dashboard twin). */
  'activity.read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

/** The permission table: every role's permissions, written once. */
export const ROLE_PERMISSIONS: Record<DashboardRole, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS,
  developer: ['payments.read', 'developers.manage'],
  finance: ['payments.read', 'balance.read', 'payments.create', 'payments.refund', 'payouts.create', 'sellers.manage'],
  support: ['payments.read', 'payments.create', 'payments.refund', 'links.manage', 'orders.manage'],
  viewer: ['payments.read', 'balance.read'],
};

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** Whether `role` holds `permission`. */
export function can(role: DashboardRole, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].includes(permission);
}

/**
 * The permissions a member needs to give an API key each scope (decision 083): through the API a
 * key does what its scopes allow, so a member never makes or rolls a key that does more than
 * their role does in the dashboard.
 */
const SCOPE_NEEDS: Record<Scope, readonly Permission[]> = {
  'intents:read': ['payments.read'],
  'intents:write': ['payments.create', 'payments.refund'],
  'balance:read': ['balance.read'],
  'payouts:read': ['balance.read'],
  'payouts:write': ['payouts.create'],
  'sellers:read': ['payments.read'],
  'sellers:write': ['sellers.manage'],
  'store.products:read': ['payments.read'],
  'store.products:write': ['catalog.manage'],
  'store.orders:read': ['payments.read'],
  'store.orders:write': ['orders.manage'],
  'webhooks:read': ['developers.manage'],
  'webhooks:write': ['developers.manage'],
  'audit:read': ['activity.read'],
  'api_keys:write': ['developers.manage'],
};

/**
 * The scopes a member may give a key of `environment`. Test mode lifts the ceiling (a test key
 * moves no real money, and a developer builds the integration there), except for the audit log,
 * whose entries of no mode (sign-ins, the team) are not test data.
 */
export function scopesMemberMayGive(role: DashboardRole, environment: Environment): Scope[] {
  return allScopes.filter(
    (scope) =>
      (environment === 'test' && scope !== 'audit:read') || SCOPE_NEEDS[scope].every((needed) => can(role, needed)),
  );
}
