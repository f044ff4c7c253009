import type { RequestOptions } from './client.js';
import { path, Resource } from './resource.js';
import type { ApiKey, ApiKeyInput, ApiKeyRoll, NewApiKey, QueryOf } from './types.js';

/**
 * The business's API keys of the caller's environment (secret key, scope `api_keys:write`, never a
 * default): a key never makes or rolls a key with a scope it lacks (SCOPE_ESCALATION), nor one of
 * the other environment (SANDBOX_MISMATCH). A new key's secret (`key`) is in the answer once.
 */
export class ApiKeys extends Resource {
  /** Newest first, masked (`hint`), with `lastUsedAt`, `lastUsedIp` and `expiresAt`. */
  list(query?: QueryOf<'listApiKeys'>, options?: RequestOptions) {
    return this.paginate<'listApiKeys'>('/api-keys', query, options);
  }
  /** `name`, `kind`, and `scopes`, `ipAllowlist`, `expiresAt` if wanted; the answer holds the secret, once. */
  create(body: ApiKeyInput, options?: RequestOptions) {
    return this.http.request<NewApiKey>({ method: 'POST', path: '/api-keys', body }, options);
  }
  /** A successor now; the old key keeps working `expiresIn` seconds (0 to 604,800), then is refused. */
  roll(id: string, body: ApiKeyRoll, options?: RequestOptions) {
    return this.http.request<NewApiKey>({ method: 'POST', path: `/api-keys/${path(id)}/roll`, body }, options);
  }
  /** Refused from now on, a rolled key in its overlap too. */
  revoke(id: string, options?: RequestOptions) {
    return this.http.request<ApiKey>({ method: 'POST', path: `/api-keys/${path(id)}/revoke` }, options);
  }
}
