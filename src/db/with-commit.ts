import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { DB } from './schema.js';

/**
 * A transaction's last write sent with its COMMIT, in one round trip (one simple-protocol message,
 * `UPDATE ...; COMMIT`) instead of a round trip of its own: on PostgreSQL each round trip costs
 * the API and the server more CPU than most statements of a payment do. The write's result is
 * not read; its failure fails the COMMIT, and the transaction rolls back.
 *
 * Both drivers (connect.ts for pg, pglite-dialect.ts) hold a statement that starts with the
 * marker until the transaction ends: sent before COMMIT, dropped at ROLLBACK. PGlite, with no
 * round trip to save, runs it as a named prepared statement just before its COMMIT: planned once
 * per session, where the text with literals is planned on every call. A statement held outside a
 * transaction, or a savepoint taken while one is held, is a programming error and throws: the
 * statement would otherwise be lost or sent with another transaction's COMMIT.
 */
const MARKER = '/* with commit */ ';

/** Runs `query` with the COMMIT of the transaction `trx` (see above). */
export async function executeWithCommit(trx: Transaction<DB>, query: RawBuilder<unknown>): Promise<void> {
  if (!trx.isTransaction) throw new Error('a statement sent with COMMIT needs a transaction');
  await sql`${sql.raw(MARKER)}${query}`.execute(trx);
}

export function isWithCommit(text: string): boolean {
  return text.startsWith(MARKER);
}

/**
 * A literal PostgreSQL reads back as the same value whatever `standard_conforming_strings` says,
 * and as untyped as a parameter: integers are quoted too (a bare `-5` after a minus would start
 * a comment, and a bare number is typed where a parameter is not).
 */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return `'${value}'`;
  if (typeof value === 'string') {
    if (value.includes('\0')) throw new Error('a text parameter holds a NUL character');
    return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  }
  throw new Error(`a statement sent with BEGIN or COMMIT takes only integers, text and null, not ${typeof value}`);
}

/**
 * The statement's text (without its marker) with its parameters written in as literals (a
 * simple-protocol message has no parameters). Only for statements whose text we write, with no
 * quotes of their own: a `$n` inside a quoted string would be replaced too.
 */
export function inlineParameters(statement: string, values: readonly unknown[]): string {
  if (statement.includes("'"))
    throw new Error('a statement sent with BEGIN or COMMIT must pass its text as parameters');
  // One message runs every statement in it: a `;` would make this one several.
  if (statement.includes(';')) throw new Error('a statement sent with BEGIN or COMMIT must be a single statement');
  return statement.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new Error(`no parameter $${n}`);
    return literal(values[index]);
  });
}

/** The first words of a transaction-control statement, or '' for any other statement. */
export function controlOf(text: string): string {
  if (text.length > 60) return '';
  return text.trimStart().slice(0, 17).toLowerCase();
}

/** A statement waiting for its COMMIT: its text and parameters, and the two written as one text. */
export interface HeldStatement {
  text: string;
  values: readonly unknown[];
  inlined: string;
}

/**
 * What one connection holds for its transaction's COMMIT. The driver shows it every statement it
 * sends (`outgoing`), which answers what to send instead: `undefined` when the text goes as is.
 */
export class CommitTail {
  private held: HeldStatement[] = [];
  private open = false;

  hold(text: string, values: readonly unknown[]): void {
    if (!this.open) throw new Error('a statement sent with COMMIT was run outside a transaction');
    // Written in now whichever driver sends it, so that a value that cannot be refuses on both.
    const statement = text.slice(MARKER.length);
    this.held.push({ text: statement, values, inlined: inlineParameters(statement, values) });
  }

  /** The held statements, for a driver that runs them itself right before its COMMIT; none stay. */
  takeForCommit(): HeldStatement[] {
    this.open = false;
    const held = this.held;
    this.held = [];
    return held;
  }

  outgoing(text: string): string | undefined {
    const control = controlOf(text);
    if (control === '') return undefined;
    if (control.startsWith('begin') || control.startsWith('start transaction')) {
      this.open = true;
      this.held = [];
      return undefined;
    }
    if (control.startsWith('commit')) {
      this.open = false;
      const held = this.held;
      this.held = [];
      return held.length > 0 ? `${held.map((statement) => statement.inlined).join(';\n')};\n${text}` : undefined;
    }
    if (control.startsWith('rollback to') || control.startsWith('savepoint') || control.startsWith('release')) {
      if (this.held.length > 0) throw new Error('a savepoint was used while a statement waits for COMMIT');
      return undefined;
    }
    if (control.startsWith('rollback')) {
      this.open = false;
      this.held = [];
    }
    return undefined;
  }
}
