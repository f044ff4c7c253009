import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { EXPIRING_NOTICE_MS, keyColumns, toView } from '../businesses/keys.js';
import { eventRecord } from '../events/outbox.js';
import { unitOfWork } from '../events/unit-of-work.js';
import { keyEventData } from './acts.js';

/**
 * Worker task 'api-key-expiring' (leased, every minute; decision 084): `api_key.expiring` for
 * each key that stops working within 24 hours and was not told yet, once per key (the mark and
 * the event in one transaction). Keys already refused (revoked, suspended, expired) are not told.
 */
export async function sendExpiringNotices(
  db: Kysely<DB>,
  options: { now?: Date; batchSize?: number } = {},
): Promise<number> {
  const now = options.now ?? new Date();
  const horizon = new Date(now.getTime() + EXPIRING_NOTICE_MS);
  let sent = 0;
  for (;;) {
    const due = await db
      .selectFrom('api_keys')
      .select('id')
      .where('expiring_sent_at', 'is', null)
      .where('expires_at', '>', now)
      .where('expires_at', '<=', horizon)
      .where('status', 'in', ['active', 'rotated'])
      .orderBy('expires_at')
      .limit(options.batchSize ?? 200)
      .execute();
    for (const { id } of due) {
      await db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('api_keys')
          .set({ expiring_sent_at: sql<Date>`now()` })
          .where('id', '=', id)
          .where('expiring_sent_at', 'is', null)
          .returning(keyColumns)
          .executeTakeFirst();
        if (!row) return;
        const owner = { businessId: row.business_id, environment: row.environment };
        await unitOfWork()
          .events([eventRecord('api_key.expiring', owner, row.id, keyEventData(toView(row, now.getTime())), now)])
          .run(trx);
        sent++;
      });
    }
    if (due.length < (options.batchSize ?? 200)) return sent;
  }
}
