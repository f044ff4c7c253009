import { sql, type Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';

/**
 * Rows of several months in the four tables migration 056 partitions, written into a database
 * at migration 055 (months before now, this month, and one six months ahead, which lands in a
 * default partition), with the webhook deliveries that point at the events.
 */
export const HISTORY = sql`
  INSERT INTO businesses (id, name) VALUES ('biz_history', 'History');
  INSERT INTO webhook_endpoints (id, business_id, environment, url, events, secret)
    VALUES ('we_history', 'biz_history', 'test', 'https://example.com/hook', ARRAY['payment_intent.succeeded'], 'whsec_x');
  CREATE TEMP TABLE history_months AS
    SELECT m, now() - make_interval(months => m) AS at FROM unnest(ARRAY[14, 5, 2, 1, 0, -6]) AS m;
  INSERT INTO ledger_postings (transaction_id, account_id, amount, kind, reference, created_at)
    SELECT 'ltx_' || m || '_' || i || side, a.id,
      CASE WHEN (a.kind = 'revenue') = (side = 'a') THEN i * 100 ELSE -i * 100 END, 'credit', 'history', at
    FROM history_months, generate_series(1, 20) AS i, unnest(ARRAY['a', 'b']) AS side,
      (SELECT id, kind FROM ledger_accounts WHERE environment = 'test' AND kind IN ('revenue', 'tof')) AS a;
  INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference, source_kind,
      ledger_transaction_id, created_at)
    SELECT 'btx_' || m || '_' || i, 'biz_history', 'test', 'payment', 1000 + i, 10, 990 + i, 'pi_' || m, 'payment_intent',
      'ltx_' || m || '_' || i || 'a', at
    FROM history_months, generate_series(1, 10) AS i;
  INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
    SELECT 'evt_' || m || '_' || i, 'biz_history', 'test', 'payment_intent.succeeded', 'pi_' || m, '{}', at, i
    FROM history_months, generate_series(1, 10) AS i;
  INSERT INTO webhook_deliveries (id, event_id, endpoint_id, business_id, environment, event, status, next_attempt_at,
      created_at, updated_at)
    SELECT 'whd_' || m || '_' || i, 'evt_' || m || '_' || i, 'we_history', 'biz_history', 'test',
      'payment_intent.succeeded', 'SUCCEEDED', at, at, at
    FROM history_months, generate_series(1, 10) AS i WHERE m IN (5, 0);
  INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code)
    SELECT id, 1, created_at, 200 FROM webhook_deliveries WHERE business_id = 'biz_history';`;

/** Count, sum and a digest of every column of each table, to compare before and after. */
export async function fingerprint(db: Kysely<DB>) {
  const { rows } = await sql<{ name: string; n: string; total: string; digest: string }>`
    SELECT 'ledger_postings' AS name, count(*)::text AS n, coalesce(sum(amount), 0)::text AS total,
      md5(coalesce(string_agg(t::text, '|' ORDER BY id), '')) AS digest FROM ledger_postings t
    UNION ALL SELECT 'balance_transactions', count(*)::text, coalesce(sum(net), 0)::text,
      md5(coalesce(string_agg(t::text, '|' ORDER BY id), '')) FROM balance_transactions t
    UNION ALL SELECT 'events', count(*)::text, coalesce(sum(seq), 0)::text,
      md5(coalesce(string_agg(t::text, '|' ORDER BY id), '')) FROM events t
    UNION ALL SELECT 'webhook_attempts', count(*)::text, coalesce(sum(status_code), 0)::text,
      md5(coalesce(string_agg(t::text, '|' ORDER BY delivery_id, attempt), '')) FROM webhook_attempts t
    UNION ALL SELECT 'list_counts', count(*)::text, coalesce(sum(n), 0)::text, '' FROM list_counts`.execute(db);
  return rows;
}
