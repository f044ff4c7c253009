import type { RequestOptions } from './client.js';
import { Resource } from './resource.js';
import type { QueryOf } from './types.js';

/**
 * The audit log (secret key, scope `audit:read`): who did what to the business, when and from
 * where, newest first; the key's environment and the acts of no environment. Entries are never
 * edited or deleted.
 */
export class AuditLog extends Resource {
  /** Filters `actor` (a user's or key's id, `operator`, `system`), `action`, `from`, `to`; `for await` walks every page. */
  list(query?: QueryOf<'listAuditLog'>, options?: RequestOptions) {
    return this.paginate<'listAuditLog'>('/audit-log', query, options);
  }
}
