import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.js';

export type Executor = Kysely<DB> | Transaction<DB>;

/** Runs `work` in the caller's transaction if there is one, else in a new one. */
export function inTransaction<T>(executor: Executor, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return executor.isTransaction ? work(executor as Transaction<DB>) : executor.transaction().execute(work);
}
