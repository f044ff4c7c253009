import type { EVENT_NAMES } from '../../../events/catalog.js';
import type { Scope } from '../../../keys/scopes.js';
import type { IssuedKey, KeyView } from '../../../businesses/keys.js';
import type { Selectable } from 'kysely';
import type { EventsTable } from '../../../../db/schema.js';
import type { DeliveryView, getDelivery } from '../../../webhooks/deliveries.js';
import type { DELIVERY_STATUSES } from '../../../webhooks/delivery-state.js';
import type { EndpointView, listEndpoints } from '../../../webhooks/endpoints.js';
import type { withHealth } from '../../delivery-health.js';

type Resolved<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
type DeliveryRows = ReturnType<typeof withHealth<DeliveryView>>;

/** A stored event as the log lists it. */
type EventEntry = Pick<Selectable<EventsTable>, 'id' | 'event' | 'subject' | 'created_at' | 'body' | 'seq'>;

/** What the Developers pages' templates draw: keys, webhook endpoints, their deliveries, and the event log. */
export interface DeveloperViews {
  keys: { keys: KeyView[]; scopes: readonly Scope[]; overlaps: readonly string[] };
  /** A new or rolled key, its secret shown this once; `overlap`: the seconds the rolled key keeps working. */
  'key-created': { key: IssuedKey; overlap?: number };
  webhooks: { endpoints: Resolved<typeof listEndpoints>['items']; eventNames: typeof EVENT_NAMES };
  endpoint: { endpoint: EndpointView; eventNames: typeof EVENT_NAMES; deliveries: DeliveryRows };
  /** A new endpoint, or one whose secret was rotated, its secret shown this once. */
  'endpoint-created': { endpoint: EndpointView; rotated?: boolean };
  deliveries: {
    deliveries: DeliveryRows;
    total: number;
    page: number;
    pages: number;
    filters: { status: string; event: string; endpoint: string; from: string; to: string };
    filterQuery: string;
    statuses: typeof DELIVERY_STATUSES;
    eventNames: typeof EVENT_NAMES;
    endpoints: Resolved<typeof listEndpoints>['items'];
  };
  delivery: { delivery: Resolved<typeof getDelivery>; failing: boolean; payload: string };
  events: {
    events: EventEntry[];
    older: number | null;
    newest: boolean;
    event: string;
    eventNames: typeof EVENT_NAMES;
  };
}
