import type { ColumnType } from 'kysely';

/** Which of a business's two worlds a row belongs to: test keys see test rows, live keys live ones. */
export type Environment = 'test' | 'live';

/** A timestamp column the database fills unless told otherwise. */
export type CreatedAt = ColumnType<Date, Date | undefined, Date>;

/** jsonb columns with a default: read as values, written as JSON text. */
export type Json<T> = ColumnType<T, string | undefined, string>;
