import type { Kysely, Transaction } from 'kysely';
import type { BatchBudget } from '../config.js';
import type { DB } from './schema.js';

export type { BatchBudget } from '../config.js';

/** What one run of a cleanup did: rows deleted, batches, and whether it found the end. */
export interface BatchedDeleteResult {
  deleted: number;
  batches: number;
  /** False: the budget ran out first, the next run goes on where this one stopped. */
  done: boolean;
}

/**
 * The one shape of every cleanup task (decision 093): `deleteBatch` deletes at most `limit` rows
 * and says how many, each call in a transaction of its own, until a batch comes back short or the
 * run's budget is spent. Never one huge DELETE: a batch holds its row locks and its WAL for a few
 * milliseconds, and a run killed halfway loses one uncommitted batch, which the next run deletes
 * again (a batch picks its rows by what they are, not by where the last run stopped).
 */
export async function deleteInBatches(
  db: Kysely<DB>,
  budget: BatchBudget,
  deleteBatch: (trx: Transaction<DB>, limit: number) => Promise<number>,
): Promise<BatchedDeleteResult> {
  const started = Date.now();
  let deleted = 0;
  let batches = 0;
  while (batches < budget.maxBatches && Date.now() - started < budget.maxMs) {
    const count = await db.transaction().execute((trx) => deleteBatch(trx, budget.rows));
    batches++;
    deleted += count;
    if (count < budget.rows) return { deleted, batches, done: true };
  }
  return { deleted, batches, done: false };
}
