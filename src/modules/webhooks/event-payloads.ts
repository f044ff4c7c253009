import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/schemas.js';

/** The data of the webhook notices (`ping`, `endpoint.disabled`): camelCase, in the store envelope. */
const PingData = Type.Object({ endpointId: Type.String(), message: Type.String() }, { title: 'PingData' });
const EndpointDisabledData = Type.Object(
  {
    endpointId: Type.String(),
    url: Type.String(),
    disabled: Type.Boolean({ description: 'false: a warning before the endpoint is disabled at disableAt' }),
    reason: Type.Literal('FAILING'),
    failingSince: Nullable(Timestamp),
    disableAt: Timestamp,
  },
  { title: 'EndpointDisabledData' },
);

/** When each notice is sent, for the webhooks' documentation. */
export const webhookNoticePayloads = {
  ping: { when: 'POST /webhooks/endpoints/{id}/test (that endpoint only).', data: PingData },
  'endpoint.disabled': {
    when: 'An endpoint has failed for days: a warning, then its disabling (every endpoint of the business gets it).',
    data: EndpointDisabledData,
  },
} as const;

type WebhookNoticePayloads = { [N in keyof typeof webhookNoticePayloads]: (typeof webhookNoticePayloads)[N]['data'] };

declare module '../events/catalog.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into the registry: its members are inherited
  interface EventPayloads extends WebhookNoticePayloads {}
}
