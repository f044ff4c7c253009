export const allScopes = [
  'intents:read',
  'intents:write',
  'balance:read',
  'payouts:read',
  'payouts:write',
  'sellers:read',
  'sellers:write',
  'store.products:read',
  'store.products:write',
  'store.orders:read',
  'store.orders:write',
  'webhooks:read',
  'webhooks:write',
  'audit:read',
  'api_keys:write',
] as const;

export type Scope = (typeof allScopes)[number];

/**
 * What a key created without a list gets: every scope but `api_keys:write` (decisions.md: a key
 * that makes keys is only ever asked for by name) and `audit:read` (the log names the team's
 * emails and sign-in addresses, which only owners and admins see in the dashboard; issue 53).
 */
export const defaultScopes: readonly Scope[] = allScopes.filter(
  (scope) => scope !== 'api_keys:write' && scope !== 'audit:read',
);

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}
