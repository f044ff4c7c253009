import { describe, expectTypeOf, test } from 'vitest';
import { eventRecord, type EventData } from '../../src/modules/events/outbox.js';

const owner = { businessId: 'biz_1', environment: 'test' as const };

/**
 * Issue 49 item 2: an event's data is typed by its name's schema, so a payload that does not
 * match does not compile (`npx tsc --noEmit` checks this file; vitest runs the few lines that run).
 */
describe('event payloads are typed by their name', () => {
  test('a payload of the right shape compiles; a wrong or missing field does not', () => {
    const ping = eventRecord('ping', owner, 'we_1', { endpointId: 'we_1', message: 'hello' });
    expectTypeOf(ping.body).toBeString();

    // @ts-expect-error a field the schema does not have
    eventRecord('ping', owner, 'we_1', { endpointId: 'we_1', message: 'hello', extra: 1 });
    // @ts-expect-error a required field missing
    eventRecord('ping', owner, 'we_1', { endpointId: 'we_1' });
    eventRecord('product.stock_out', owner, 'prod_1', {
      productId: 'p',
      externalId: null,
      name: 'n',
      shopId: 's',
      // @ts-expect-error a field of the wrong type: stock_out's quantity is 0
      quantity: 3,
    });
    // @ts-expect-error a name outside the catalogue
    eventRecord('payment.teleported', owner, 'PI-1', {});
  });

  test('each name has the data of its own schema', () => {
    expectTypeOf<EventData<'order.accepted'>>().toEqualTypeOf<{
      referenceNumber: string;
      status: string;
      previousStatus: string;
    }>();
    expectTypeOf<EventData<'payment.confirmed'>['currency']>().toEqualTypeOf<'MRU'>();
    expectTypeOf<EventData<'payout.paid'>['destination']>().toEqualTypeOf<{ type: 'WALLET'; phone: string }>();
  });
});
