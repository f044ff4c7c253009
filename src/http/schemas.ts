import { Type, type TLiteral, type TSchema, type TSchemaOptions, type TUnion } from 'typebox';
import { ApiError } from './errors.js';

/** The literal schemas of a vocabulary's tuple, position by position. */
type Literals<Values extends readonly string[]> = { -readonly [Index in keyof Values]: TLiteral<Values[Index]> };

/**
 * One of a vocabulary's values (INTENT_STATUSES, ORDER_STATUSES...), from its `as const` tuple:
 * `anyOf` of `const`s in the JSON Schema, as a union of Type.Literal gives. The tuple is mapped as
 * a type because `Type.Union(values.map(Type.Literal))` is typed by an array, whose Static is never.
 */
export function literalUnion<const Values extends readonly string[]>(
  values: Values,
  options?: TSchemaOptions,
): TUnion<Literals<Values>> {
  return Type.Union<Literals<Values>>(values.map((value) => Type.Literal(value)) as [...Literals<Values>], options);
}

/** A field that may also be null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** The success envelope of api.md 2.1. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ success: Type.Literal(true), data });
}

/** The error envelope, shape one of api.md 7 with decisions' requestId and details. */
export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      statusCode: Type.Integer(),
      requestId: Type.String(),
      details: Type.Optional(
        Type.Array(
          Type.Object({
            field: Type.String(),
            message: Type.String(),
            code: Type.Optional(
              Type.String({
                description:
                  'In a payout batch: the code a payout of its own would get for this problem (AMOUNT_OUT_OF_RANGE, METADATA_VALUE_TOO_LONG, VALIDATION_ERROR, ...)',
              }),
            ),
          }),
        ),
      ),
    }),
  },
  { $id: 'ErrorEnvelope', title: 'Error' },
);

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });

export const Pagination = {
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, default: 20, description: 'max 100; larger values are capped' })),
};

export const MAX_PAGE_SIZE = 100;

/** `data` of every list: api.md 2.1 and 8. */
export function Paginated<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    page: Type.Integer(),
    limit: Type.Integer(),
    total: Type.Integer(),
    hasMore: Type.Boolean(),
  });
}

export function pageWindow(query: { page?: number; limit?: number }) {
  const page = query.page ?? 1;
  const limit = Math.min(query.limit ?? 20, MAX_PAGE_SIZE);
  return { page, limit, offset: (page - 1) * limit };
}

/** The `data` of a list: one window of it (`pageWindow`) and the total that matches. */
export function pageOf<T>(
  window: { page: number; limit: number; offset: number },
  result: { items: T[]; total: number },
) {
  return {
    items: result.items,
    page: window.page,
    limit: window.limit,
    total: result.total,
    hasMore: window.offset + result.items.length < result.total,
  };
}

const DATE_FILTER_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,3})?Z)?$';

/** decisions.md: date filters take the API's timestamp form or a plain `YYYY-MM-DD` (UTC). */
export const DateFilter = Type.String({
  pattern: DATE_FILTER_PATTERN,
  description:
    'YYYY-MM-DDTHH:mm:ss.sssZ, or YYYY-MM-DD (start of day for `from`, end of day for `to`); `from` after `to` is refused (VALIDATION_ERROR)',
});

/** Reads a date filter; a calendar date that does not exist (2026-02-30) is a validation error. */
export function parseDateFilter(value: string | undefined, bound: 'from' | 'to'): Date | undefined {
  if (value === undefined) return undefined;
  const dateOnly = value.length === 10;
  const date = new Date(dateOnly ? `${value}T${bound === 'from' ? '00:00:00.000' : '23:59:59.999'}Z` : value);
  // Year 0000 exists for JavaScript, not for PostgreSQL (1 BC): refused the same on every driver.
  if (
    Number.isNaN(date.getTime()) ||
    date.getUTCFullYear() < 1 ||
    date.toISOString().slice(0, 10) !== value.slice(0, 10)
  ) {
    throw new ApiError('VALIDATION_ERROR', `query.${bound} is not a valid date.`, [
      { field: `query.${bound}`, message: 'is not a valid date' },
    ]);
  }
  return date;
}

/**
 * A list's `from`/`to` pair, read as its route reads it: each a valid date, and `from` not after
 * `to` (decisions.md: 400 VALIDATION_ERROR, on every list and export that takes them). The one
 * check of the pair; `checkDateRanges` (validation.ts) runs it before every such route's handler.
 */
export function parseDateRange(query: { from?: string | undefined; to?: string | undefined }): {
  from: Date | undefined;
  to: Date | undefined;
} {
  const from = parseDateFilter(query.from, 'from');
  const to = parseDateFilter(query.to, 'to');
  if (from && to && from > to) {
    throw new ApiError('VALIDATION_ERROR', 'query.from is after query.to.', [
      { field: 'query.from', message: 'is after query.to' },
    ]);
  }
  return { from, to };
}

/** Whether a query parameter's schema is a date filter (a `from` or `to` of a list). */
export function isDateFilter(schema: unknown): boolean {
  return (schema as { pattern?: unknown } | undefined)?.pattern === DATE_FILTER_PATTERN;
}
