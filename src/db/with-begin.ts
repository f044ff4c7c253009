import { sql, type RawBuilder } from 'kysely';
import { controlOf, inlineParameters } from './with-commit.js';

/**
 * A transaction's BEGIN sent with its first statement, in one round trip (one simple-protocol
 * message, `BEGIN; SELECT ...`), the way with-commit.ts sends its last write with its COMMIT:
 * every write through the write path opens with the same cheap statement (the idempotency
 * claim), so its transaction costs one round trip less on PostgreSQL.
 *
 * Only the pg driver (connect.ts) holds the BEGIN. It sends the two together when the first
 * statement is marked `withBegin`; before any other first statement it sends the BEGIN on its
 * own, as it always did. A marked statement run outside a transaction, or on PGlite (no round
 * trips to save), runs as it is: the marker is a comment. Marked statements should be cheap to
 * plan, since written in as literals they are planned on every call, where an unmarked one runs
 * as a named prepared statement.
 */
const MARKER = '/* with begin */ ';

/** `query`, marked to carry its transaction's BEGIN when it is the transaction's first statement. */
export function withBegin<T>(query: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`${sql.raw(MARKER)}${query}`;
}

export function isWithBegin(text: string): boolean {
  return text.startsWith(MARKER);
}

/** What the driver sends for a statement, given the BEGIN it may hold. */
export type Opening =
  /** Nothing is held: the statement goes as it would have. */
  | { kind: 'as-is' }
  /** The BEGIN itself, now held: answer it without sending anything. */
  | { kind: 'held' }
  /** A transaction that never ran a statement ends: nothing to send. */
  | { kind: 'nothing' }
  /** One message with the BEGIN: send `text` instead, and answer with its last result. */
  | { kind: 'together'; text: string }
  /** Send the held `begin` first, then the statement as it would have gone. */
  | { kind: 'begin-first'; begin: string };

function inlineable(statement: string, values: readonly unknown[]): string | undefined {
  try {
    return inlineParameters(statement, values);
  } catch {
    return undefined;
  }
}

/** The BEGIN one connection holds until its transaction's first statement. */
export class HeldBegin {
  private begin: string | undefined;

  /**
   * `text` and `values` are the statement as the caller gave it; `withTail` is what CommitTail
   * sends instead of a COMMIT that carries held writes, so a transaction whose only statements
   * were held is still one message.
   */
  opening(text: string, values: readonly unknown[], withTail: string | undefined): Opening {
    const control = controlOf(text);
    if (control.startsWith('begin') || control.startsWith('start transaction')) {
      if (this.begin !== undefined) return this.flush();
      this.begin = text;
      return { kind: 'held' };
    }
    const begin = this.begin;
    if (begin === undefined) return { kind: 'as-is' };
    this.begin = undefined;
    if (control.startsWith('rollback') && !control.startsWith('rollback to')) return { kind: 'nothing' };
    if (control.startsWith('commit')) {
      return withTail === undefined ? { kind: 'nothing' } : { kind: 'together', text: `${begin};\n${withTail}` };
    }
    if (isWithBegin(text)) {
      // A statement that cannot be written in (a value of another type) still runs, the slow way,
      // so a marked statement behaves the same on both drivers, first or not.
      const inlined = inlineable(text.slice(MARKER.length), values);
      if (inlined !== undefined) return { kind: 'together', text: `${begin};\n${inlined}` };
    }
    return { kind: 'begin-first', begin };
  }

  /** Any statement the driver sends in a form `opening` does not read (a config object). */
  flush(): Opening {
    const begin = this.begin;
    this.begin = undefined;
    return begin === undefined ? { kind: 'as-is' } : { kind: 'begin-first', begin };
  }
}
