import type { AuditAction } from '../../../audit/actions.js';

/** An entry as the Activity page draws it: its words already in the page's language. */
export interface ActivityRow {
  id: string;
  createdAt: string;
  action: AuditAction;
  what: string;
  who: string;
  ip: string | null;
  target: { kind: string; id: string; href: string | null } | null;
}

/** What the Activity page's template draws. */
export interface ActivityViews {
  activity: {
    rows: ActivityRow[];
    actions: { value: AuditAction; words: string }[];
    members: { value: string; words: string }[];
    filters: { action: string; actor: string };
    filterQuery: string;
    total: number;
    page: number;
    pages: number;
  };
}
