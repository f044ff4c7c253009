import { sql, type RawBuilder } from 'kysely';

/**
 * CTEs whose names the statement that holds them gives: `name('lines')` is an identifier no other
 * part of that statement uses. A part that writes several CTEs (a ledger transfer) refers to its
 * own by these names, so parts never clash by convention.
 */
export type NamedCtes = (name: (part: string) => RawBuilder<unknown>) => RawBuilder<unknown>;

/** The names of a part's CTEs under `prefix` (`prefix_lines`, ...). */
export function namesUnder(prefix: string): (part: string) => RawBuilder<unknown> {
  return (part) => sql.id(`${prefix}_${part}`);
}
