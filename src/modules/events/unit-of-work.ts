import { sql, type Compilable, type OperationNodeSource, type RawBuilder } from 'kysely';
import { namesUnder, type NamedCtes } from '../../db/named-ctes.js';
import type { Executor } from '../../db/transaction.js';
import { eventCtes, type EventRecord } from './outbox.js';

/** A statement of the unit: an INSERT, UPDATE or DELETE (with RETURNING if read). */
type Write = RawBuilder<unknown>;

/** The change: a Kysely query builder, or an SQL template where a builder does not fit. */
type Change<Row> = (Compilable<Row> & OperationNodeSource) | RawBuilder<Row>;

/**
 * One unit of work: a change, the money it moves, what else it writes and the events it causes,
 * in one statement of the caller's transaction, so one round trip. The unit owns the statement's
 * CTE names: the change is `changed` (what `following` parts read, what `run` answers), each
 * ledger transfer gets names of its own, and the events' CTEs are the outbox's. With no change,
 * the unit writes the rest alone (events and their deliveries, a payment's row).
 *
 * The CTEs are written in this order: money, writes, the change, what follows it, the events.
 */
export class UnitOfWork<Row = never> {
  private changeQuery: Change<Row> | undefined;
  private readonly moneyParts: NamedCtes[] = [];
  private readonly writes: Write[] = [];
  private readonly followers: ((changed: RawBuilder<unknown>) => Write)[] = [];
  private readonly records: EventRecord[] = [];
  private fanOut = true;

  /** The change whose rows `run` answers (an UPDATE or INSERT ... RETURNING). */
  change<R>(query: Change<R>): UnitOfWork<R> {
    if (this.changeQuery) throw new Error('a unit of work makes one change');
    const unit = this as unknown as UnitOfWork<R>;
    unit.changeQuery = query;
    return unit;
  }

  /** The ledger lines of one transfer (zero or more per unit); none when it moves nothing. */
  money(transfer: NamedCtes | { ctes: NamedCtes | undefined } | undefined): this {
    const ctes = typeof transfer === 'function' ? transfer : transfer?.ctes;
    if (ctes) this.moneyParts.push(ctes);
    return this;
  }

  /** A statement written beside the change, not reading it (a payment's row). */
  write(statement: Write): this {
    this.writes.push(statement);
    return this;
  }

  /** A statement that reads the change's rows (`changed`), such as a payment naming the order just inserted. */
  following(statement: (changed: RawBuilder<unknown>) => Write): this {
    this.followers.push(statement);
    return this;
  }

  /**
   * Events the unit announces, numbered per object. `fanOut: false` writes them without the
   * deliveries to subscribed endpoints: the caller chooses who gets them.
   */
  events(records: readonly EventRecord[], options: { fanOut?: boolean } = {}): this {
    this.records.push(...records);
    if (options.fanOut === false) this.fanOut = false;
    return this;
  }

  /** Writes the unit in one statement (none if it holds nothing); the change's rows. */
  async run(executor: Executor): Promise<Row[]> {
    const change = this.changeQuery;
    const ctes: RawBuilder<unknown>[] = [
      ...this.moneyParts.map((part, i) => part(namesUnder(`money${i}`))),
      ...this.writes.map((statement, i) => sql`${sql.id(`write${i}`)} AS (${statement})`),
    ];
    const changed = sql.id('changed');
    if (change) {
      ctes.push(sql`${changed} AS (${change})`);
      ctes.push(...this.followers.map((follow, i) => sql`${sql.id(`following${i}`)} AS (${follow(changed)})`));
    } else if (this.followers.length > 0) {
      throw new Error('a unit of work with no change has nothing to follow');
    }
    if (this.records.length > 0) ctes.push(eventCtes(this.records, { fanOut: this.fanOut }));
    if (!change) {
      if (ctes.length > 0) await sql`WITH ${sql.join(ctes)} SELECT 1`.execute(executor);
      return [];
    }
    // A change alone is its own statement: nothing to name.
    if (ctes.length === 1) return (await sql<Row>`${change}`.execute(executor)).rows;
    return (await sql<Row>`WITH ${sql.join(ctes)} SELECT * FROM ${changed}`.execute(executor)).rows;
  }
}

/** A new, empty unit of work. */
export function unitOfWork(): UnitOfWork {
  return new UnitOfWork();
}
