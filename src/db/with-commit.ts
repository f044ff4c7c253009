import { sql, type RawBuilder } from 'kysely';

/**
 * A transaction's last write sent with its COMMIT, in one round trip (one simple-protocol message,
 * `UPDATE ...; COMMIT`) instead of a round trip of its own: on PostgreSQL each round trip costs
 * the API and the server more CPU than most statements of a payment do. The write's result is
 * not read; its failure fails the COMMIT, and the transaction rolls back.
 *
 * Both drivers (connect.ts for pg, pglite-dialect.ts) hold a statement that starts with the
 * marker until the transaction ends: sent before COMMIT, dropped at ROLLBACK.
 */
const MARKER = '/* with commit */ ';

/** `query`, to be sent with the COMMIT of the transaction it is executed in (see above). */
export function withCommit(query: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`${sql.raw(MARKER)}${query}`;
}

export function isWithCommit(text: string): boolean {
  return text.startsWith(MARKER);
}

/** A literal PostgreSQL reads back as the same text whatever `standard_conforming_strings` says. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string') {
    if (value.includes('\0')) throw new Error('a text parameter holds a NUL character');
    return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  }
  throw new Error(`a statement sent with COMMIT takes only integers, text and null, not ${typeof value}`);
}

/**
 * The statement's text with its parameters written in as literals (a simple-protocol message has
 * no parameters). Only for statements whose text we write: a `$n` inside a quoted string of the
 * text would be replaced too.
 */
export function inlineParameters(text: string, values: readonly unknown[]): string {
  return text.slice(MARKER.length).replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new Error(`no parameter $${n}`);
    return literal(values[index]);
  });
}

/**
 * The statements a connection holds for its transaction's COMMIT. `take` answers what to send
 * for a transaction-control text: `undefined` when the text goes as it is.
 */
export class CommitTail {
  private held: string[] = [];

  hold(text: string, values: readonly unknown[]): void {
    this.held.push(inlineParameters(text, values));
  }

  /** For `commit`: the held statements and the commit, as one message; `begin`/`rollback` drop them. */
  take(control: string): string | undefined {
    if (control.length > 8) return undefined;
    const verb = control.toLowerCase();
    if (verb !== 'commit' && verb !== 'begin' && verb !== 'rollback') return undefined;
    const held = this.held;
    this.held = [];
    return verb === 'commit' && held.length > 0 ? `${held.join(';\n')};\n${control}` : undefined;
  }
}
