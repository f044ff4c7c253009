import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/schema.js';
import { isConnectionLoss } from '../../../http/error-handler.js';
import { recordOutcomes, type Outcome } from './record-outcomes.js';

/** Outcomes written by one statement at most. */
const RECORD_BATCH = 500;

/**
 * The record phase: outcomes that arrive while a batch is being written wait and go in the next
 * batch, one batch at a time.
 */
export class OutcomeWriter {
  private readonly pending: Outcome[] = [];
  private writing: Promise<void> | undefined;
  /**
   * A stopping worker gives up on a lost database instead of waiting for it: set once its
   * attempts in flight have ended (engine.ts), so what they bring back still waits for it.
   */
  stopping = false;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly workerId: string,
    private readonly retryScale: number,
    private readonly logger: FastifyBaseLogger,
    private readonly onRecorded: (ids: string[]) => void,
  ) {}

  get busy(): boolean {
    return this.writing !== undefined || this.pending.length > 0;
  }

  add(outcome: Outcome): void {
    this.pending.push(outcome);
  }

  async drain(): Promise<void> {
    this.flush();
    await this.writing;
  }

  flush(): void {
    if (this.writing || this.pending.length === 0) return;
    this.writing = (async () => {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, RECORD_BATCH);
        try {
          await this.untilRecorded(batch);
        } catch (error) {
          // One bad row must not cost the others their outcome: write them one by one.
          for (const outcome of batch) {
            try {
              await this.untilRecorded([outcome]);
            } catch (single) {
              this.logger.error({ err: single, deliveryId: outcome.delivery.id }, 'webhook attempt failed to record');
            }
          }
          if (batch.length === 1) this.logger.debug({ err: error }, 'webhook outcome batch failed');
        }
        this.onRecorded(batch.map((outcome) => outcome.delivery.id));
      }
    })().finally(() => {
      this.writing = undefined;
      this.flush();
    });
  }

  /**
   * The receiver already has the request when its outcome is written. If the database is out of
   * reach then, the outcome waits here and is written once it is back: the delivery stays held
   * (the claim skips it, the heartbeat renews its lease when it can) rather than being sent again
   * when its lease lapses. Only a stopping worker gives up, once its last attempt has ended; its
   * delivery is then sent again by whoever claims it (at least once, as always).
   */
  private async untilRecorded(batch: readonly Outcome[]): Promise<void> {
    for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 2000)) {
      try {
        await recordOutcomes(this.db, this.workerId, batch, this.retryScale);
        return;
      } catch (error) {
        if (this.stopping || !isConnectionLoss(error)) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}
