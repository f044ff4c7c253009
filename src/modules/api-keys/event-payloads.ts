import { Type } from 'typebox';
import { KEY_LIST_STATUSES } from '../../db/schema.js';
import { literalUnion, Timestamp } from '../../http/schemas.js';

/** The data of every API key event: the key as the API lists it (camelCase), never its secret. */
export const ApiKeyEventData = Type.Object(
  {
    id: Type.String({ description: 'key_...' }),
    name: Type.Union([Type.String(), Type.Null()]),
    kind: literalUnion(['secret', 'publishable']),
    hint: Type.String({ description: 'The prefix and last four characters: sk_test_...a1B2' }),
    scopes: Type.Array(Type.String()),
    status: literalUnion(KEY_LIST_STATUSES),
    expiresAt: Type.Union([Timestamp, Type.Null()], { description: 'When the key stops working; null: never' }),
    replacedBy: Type.Union([Type.String(), Type.Null()], { description: 'The key that replaced it when rolled' }),
  },
  { title: 'ApiKeyEventData' },
);

/** When each API key event is sent, for the webhooks' documentation. */
export const apiKeyEventPayloads = {
  'api_key.rolled': {
    when: 'A key was rolled: the data is the old key (`rotated`, working until `expiresAt`, the overlap), `replacedBy` its successor.',
    data: ApiKeyEventData,
  },
  'api_key.revoked': { when: 'A key was revoked: it is refused from now on.', data: ApiKeyEventData },
  'api_key.expiring': {
    when: 'A key will stop working within 24 hours (`expiresAt`); sent once per key. A roll with an overlap under 24 hours sends `api_key.rolled` alone.',
    data: ApiKeyEventData,
  },
} as const;

type ApiKeyEventPayloads = {
  [N in keyof typeof apiKeyEventPayloads]: (typeof apiKeyEventPayloads)[N]['data'];
};

declare module '../events/catalog.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into the registry: its members are inherited
  interface EventPayloads extends ApiKeyEventPayloads {}
}
