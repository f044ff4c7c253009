import type { DashboardRole } from '../../db/schema.js';

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
