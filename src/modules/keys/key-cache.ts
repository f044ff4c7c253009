import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { DB, Environment, KeyKind, KeyStatus } from '../../db/schema.js';

/** Everything the auth check needs about a key, its business and the global switch. */
export interface KeyRecord {
  id: string;
  /** The key's visible prefix and last characters, never the secret: how the audit log names it. */
  hint: string;
  businessId: string;
  kind: KeyKind;
  environment: Environment;
  status: KeyStatus;
  scopes: readonly string[];
  ipAllowlist: readonly string[];
  /** When the key stops working (decision 084); auth compares it with the clock on every request. */
  expiresAt: Date | null;
  businessLiveApproved: boolean;
  businessApiEnabled: boolean;
  globalApiEnabled: boolean;
}

/** How stale a key's `last_used_at` may be. */
const LAST_USED_EVERY_MS = 60_000;

interface Entry {
  record: KeyRecord | null;
  expiresAt: number;
}

/**
 * Caches key lookups so that authentication costs no database round trip on most requests.
 * Entries live at most `ttlMs` (under 5 s), so a revoked key stops working on every process
 * within that time even without Redis; with Redis, `clear()` is also broadcast at once.
 * Unknown keys are not cached, so a key created a moment ago works on its first request.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries = 10_000;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly ttlMs: number,
    /** Milliseconds since the epoch; tests pass a clock they move to expire entries at once. */
    private readonly now: () => number = Date.now,
  ) {}

  async get(keyHash: string): Promise<KeyRecord | null> {
    const now = this.now();
    const cached = this.entries.get(keyHash);
    if (cached && cached.expiresAt > now) return cached.record;
    const record = await this.load(keyHash);
    if (record && this.ttlMs > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(keyHash, { record, expiresAt: now + this.ttlMs });
    } else {
      this.entries.delete(keyHash);
    }
    return record;
  }

  clear(): void {
    this.entries.clear();
  }

  private readonly usedWritten = new Map<string, number>();

  /**
   * Records that a key authenticated a request, and from which address (the dashboard and the
   * API show "last used"): at most one write per key per minute per process, not awaited, so a
   * request never waits on it and a busy key is no hot row. The time is to the minute.
   */
  markUsed(keyId: string, ip: string): void {
    const now = this.now();
    if ((this.usedWritten.get(keyId) ?? -Infinity) > now - LAST_USED_EVERY_MS) return;
    if (this.usedWritten.size >= this.maxEntries) this.usedWritten.clear();
    this.usedWritten.set(keyId, now);
    this.db
      .updateTable('api_keys')
      .set({ last_used_at: new Date(now - (now % LAST_USED_EVERY_MS)), last_used_ip: ip })
      .where('id', '=', keyId)
      .execute()
      .catch(() => this.usedWritten.delete(keyId));
  }

  private async load(keyHash: string): Promise<KeyRecord | null> {
    const row = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('businesses as b', 'b.id', 'k.business_id')
      .select([
        'k.id',
        'k.key_hint',
        'k.business_id',
        'k.kind',
        'k.environment',
        'k.status',
        'k.scopes',
        'k.ip_allowlist',
        'k.expires_at',
        'b.live_approved',
        'b.api_enabled',
        sql<unknown>`(SELECT value FROM platform_settings WHERE name = 'developer_api_enabled')`.as('global_enabled'),
      ])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
    if (!row) return null;
    return {
      id: row.id,
      hint: row.key_hint,
      businessId: row.business_id,
      kind: row.kind,
      environment: row.environment,
      status: row.status,
      scopes: row.scopes,
      ipAllowlist: row.ip_allowlist,
      expiresAt: row.expires_at,
      businessLiveApproved: row.live_approved,
      businessApiEnabled: row.api_enabled,
      globalApiEnabled: row.global_enabled !== false,
    };
  }
}
