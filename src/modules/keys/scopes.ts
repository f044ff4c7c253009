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
 * that makes keys is only ever asked for by name, issue 53).
 */
export const defaultScopes: readonly Scope[] = allScopes.filter((scope) => scope !== 'api_keys:write');

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}
