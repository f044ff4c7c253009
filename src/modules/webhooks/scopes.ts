import type { ScopedCaller } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { eventCatalog, EVENT_NAMES, isEventName, type EventName, type OutboxEventName } from '../events/catalog.js';
import { readableEvents } from '../events/service.js';

/**
 * What a key's scopes allow on webhooks, in one place (decisions: issue 36, item 3). A key
 * subscribes an endpoint only to the events its scopes read (`checkEvents`); it reads in the
 * delivery log only the deliveries of events it may read, as in the Events API
 * (`readableDeliveryEvents`); and it changes an endpoint, its secret or its deliveries only if it
 * could have subscribed it to every event it is subscribed to (`checkEndpointScopes`). Webhook
 * notices (ping, endpoint.disabled) are readable by any webhooks key.
 */

/** The subscribable names among `events` that `scopes` do not allow, and the scopes they need. */
function refused(events: readonly EventName[], scopes: readonly string[]) {
  const names = events.filter((name) => !scopes.includes(eventCatalog[name]));
  return { names, needed: [...new Set(names.map((name) => eventCatalog[name]))] };
}

/** INVALID_WEBHOOK_EVENT for unknown names, then EVENTS_NOT_PERMITTED for names the key may not read. */
export function checkEvents(events: readonly string[], scopes: readonly string[]): EventName[] {
  const unknown = events.filter((name) => !isEventName(name));
  if (unknown.length > 0) {
    throw new ApiError('INVALID_WEBHOOK_EVENT', `Unknown event name(s): ${unknown.join(', ')}.`);
  }
  const known = events.filter(isEventName);
  const { names, needed } = refused(known, scopes);
  if (names.length > 0) {
    throw new ApiError(
      'EVENTS_NOT_PERMITTED',
      `This key may not subscribe to ${names.join(', ')}: it needs the scope(s) ${needed.join(', ')}.`,
    );
  }
  return known;
}

/** What a key does to an endpoint, as its refusal names it. */
export type EndpointAction =
  'change' | 'delete' | 'rotate the secret of' | 'retry the deliveries of' | 'recover the deliveries of';

/**
 * EVENTS_NOT_PERMITTED unless the key may subscribe to every event the endpoint is subscribed to:
 * a key that could not have made the subscription may not redirect it, take its secret, resend
 * its events, switch it or delete it.
 */
export function checkEndpointScopes(
  endpoint: { events: readonly string[] },
  caller: ScopedCaller,
  action: EndpointAction,
): void {
  const { names, needed } = refused(endpoint.events.filter(isEventName), caller.scopes);
  if (names.length > 0) {
    throw new ApiError(
      'EVENTS_NOT_PERMITTED',
      `This key may not ${action} an endpoint subscribed to ${names.join(', ')}: it needs the scope(s) ${needed.join(', ')}.`,
    );
  }
}

/**
 * The event names whose deliveries the key reads in the delivery log (those of the Events API),
 * or `undefined` when it reads every one (the list then needs no filter).
 */
export function readableDeliveryEvents(caller: ScopedCaller): OutboxEventName[] | undefined {
  const readable = readableEvents(caller.scopes);
  return EVENT_NAMES.every((name) => readable.includes(name)) ? undefined : readable;
}
