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
] as const;

export type Scope = (typeof allScopes)[number];

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}
