import { Type, type TSchema } from 'typebox';

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
      details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
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
