import type { Generated } from 'kysely';
import type { Environment } from './columns.js';

export interface EventsTable {
  id: string;
  business_id: string;
  environment: Environment;
  event: string;
  subject: string;
  body: string;
  created_at: Date;
  /** Insertion order (events of one transaction share a timestamp). */
  seq: Generated<number>;
  /** Counts the events of the subject from 1 (migration 013). */
  sequence: number;
  /** The writing transaction (for commit-safe polling). */
  txid: Generated<number>;
}

export interface EventSequencesTable {
  business_id: string;
  environment: Environment;
  subject: string;
  last_sequence: number;
}
