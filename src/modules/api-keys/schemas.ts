import { Type } from 'typebox';
import { KEY_LIST_STATUSES } from '../../db/schema.js';
import { literalUnion, Nullable, Pagination, Timestamp } from '../../http/schemas.js';
import { allScopes } from '../keys/scopes.js';

/** The longest overlap a roll may give the old key: 7 days, in seconds. */
export const MAX_ROLL_OVERLAP_SECONDS = 604_800;

const Scope = literalUnion(allScopes);

export const ApiKey = Type.Object(
  {
    id: Type.String({ description: 'key_...' }),
    name: Nullable(Type.String()),
    kind: literalUnion(['secret', 'publishable']),
    environment: literalUnion(['test', 'live']),
    hint: Type.String({ description: 'The prefix and last four characters, never the secret: sk_test_...a1B2' }),
    scopes: Type.Array(Type.String()),
    ipAllowlist: Type.Array(Type.String()),
    status: literalUnion(KEY_LIST_STATUSES, {
      description:
        'active; rotated: rolled, working until expiresAt (the overlap), then refused; expired: past the expiresAt it was made with, refused; suspended or revoked: refused',
    }),
    createdAt: Timestamp,
    lastUsedAt: Nullable(Timestamp),
    lastUsedIp: Nullable(Type.String()),
    expiresAt: Nullable(Timestamp),
    replacedBy: Nullable(Type.String({ description: 'The key that replaced it when rolled' })),
  },
  { title: 'ApiKey' },
);

export const NewApiKey = Type.Object(
  {
    ...ApiKey.properties,
    key: Type.Optional(
      Type.String({
        description: 'The secret, in this answer only: a replay of the same idempotency key answers without it',
      }),
    ),
  },
  { title: 'NewApiKey' },
);

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
    kind: literalUnion(['secret', 'publishable']),
    environment: Type.Optional(
      literalUnion(['test', 'live'], { description: "The caller's own; the other one answers SANDBOX_MISMATCH" }),
    ),
    scopes: Type.Optional(Type.Array(Scope, { uniqueItems: true, minItems: 1 })),
    ipAllowlist: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 64 }), { maxItems: 100 })),
    expiresAt: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);

export const RollApiKeyBody = Type.Object(
  {
    expiresIn: Type.Integer({
      minimum: 0,
      maximum: MAX_ROLL_OVERLAP_SECONDS,
      description: 'Seconds the old key keeps working (0: refused at once; at most 7 days)',
    }),
  },
  { additionalProperties: false },
);

export const ApiKeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const ListApiKeysQuery = Type.Object(Pagination, { additionalProperties: false });
