import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import {
  DeliveryScheduler,
  FAST_ANSWER_MS,
  type Schedulable,
  type SchedulerLimits,
} from '../../src/modules/webhooks/delivery/scheduler.js';

const LIMITS: SchedulerLimits = {
  concurrency: 64,
  perEndpoint: 4,
  perBusiness: 8,
  reserved: 16,
  maxHeld: 2048,
  stalledAfterMs: 500,
  maxInFlight: 512,
};
/** The scheduler's clock, where a test does not move it. */
const NOW = 1_000_000;

let sequence = 0;
/** `count` deliveries of `business` (live) to `endpoint`. */
function deliveries(business: string, endpoint: string, count: number, environment = 'live'): Schedulable[] {
  return Array.from({ length: count }, () => ({
    id: `dlv_${++sequence}`,
    endpoint_id: endpoint,
    business_id: business,
    environment,
  }));
}

/** How many of `started` are per business. */
function perBusiness(started: readonly Schedulable[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const delivery of started) counts[delivery.business_id] = (counts[delivery.business_id] ?? 0) + 1;
  return counts;
}

describe('the delivery scheduler', () => {
  test('per endpoint: at most perEndpoint in flight, in the order claimed; a finished one frees its slot', () => {
    const scheduler = new DeliveryScheduler(LIMITS);
    const claimed = deliveries('biz_a', 'we_1', 6);
    scheduler.hold(claimed);
    const first = scheduler.takeStartable(NOW);
    assert.deepEqual(
      first.map((delivery) => delivery.id),
      claimed.slice(0, 4).map((delivery) => delivery.id),
    );
    assert.deepEqual(scheduler.takeStartable(NOW), []);
    scheduler.finished(first[0]!);
    assert.deepEqual(scheduler.takeStartable(NOW), [claimed[4]]);
    assert.equal(scheduler.inFlight, 4);
    // Held until its outcome is written, in flight or not.
    assert.equal(scheduler.heldCount, 6);
    scheduler.forget([first[0]!.id]);
    assert.equal(scheduler.heldCount, 5);
    assert.equal(scheduler.room, LIMITS.maxHeld - 5);
  });

  test('the process: at most concurrency in flight over all endpoints', () => {
    const scheduler = new DeliveryScheduler({ ...LIMITS, concurrency: 10, reserved: 0, perBusiness: 100 });
    for (let i = 0; i < 5; i++) scheduler.hold(deliveries('biz_a', `we_${i}`, 4));
    assert.equal(scheduler.takeStartable(NOW).length, 10);
    assert.equal(scheduler.inFlight, 10);
    assert.deepEqual(scheduler.takeStartable(NOW), []);
  });

  test('endpoints of a business take turns', () => {
    const scheduler = new DeliveryScheduler({ ...LIMITS, perBusiness: 3, reserved: LIMITS.concurrency });
    scheduler.hold([...deliveries('biz_a', 'we_1', 3), ...deliveries('biz_a', 'we_2', 3)]);
    const started = scheduler.takeStartable(NOW);
    assert.deepEqual(
      started.map((delivery) => delivery.endpoint_id),
      ['we_1', 'we_2', 'we_1'],
    );
  });

  test('fairness: silent businesses hold at most concurrency - reserved slots; another business starts at once', () => {
    const scheduler = new DeliveryScheduler(LIMITS);
    // Issue 36 item 1: four businesses with five endpoints each, every endpoint silent (no slot
    // they take is ever freed), 4 deliveries claimed per endpoint: 80 wanted, 64 slots.
    for (const business of ['biz_1', 'biz_2', 'biz_3', 'biz_4']) {
      for (let endpoint = 0; endpoint < 5; endpoint++) {
        scheduler.hold(deliveries(business, `${business}_we_${endpoint}`, 4));
      }
    }
    const silent = scheduler.takeStartable(NOW);
    assert.equal(silent.length, LIMITS.concurrency - LIMITS.reserved);
    // Taking turns, they share what they took evenly.
    assert.deepEqual(perBusiness(silent), { biz_1: 12, biz_2: 12, biz_3: 12, biz_4: 12 });

    // Another merchant's delivery, claimed later, starts as soon as it is held.
    const other = deliveries('biz_other', 'we_other', 1);
    scheduler.hold(other);
    assert.deepEqual(scheduler.takeStartable(NOW), other);
    // ... and so do its next ones, up to its share, whatever the silent ones wait for.
    scheduler.hold(deliveries('biz_other', 'we_other_2', 4));
    scheduler.hold(deliveries('biz_other', 'we_other', 4));
    assert.equal(scheduler.takeStartable(NOW).length, LIMITS.perBusiness - 1);
    assert.equal(scheduler.inFlightForBusiness({ business_id: 'biz_other', environment: 'live' }), 8);
  });

  test('fairness: as many silent businesses as slots can hold, each gets only its share', () => {
    const scheduler = new DeliveryScheduler(LIMITS);
    const businesses = Array.from({ length: 7 }, (_, i) => `biz_${i}`);
    for (const business of businesses) {
      for (let endpoint = 0; endpoint < 5; endpoint++) {
        scheduler.hold(deliveries(business, `${business}_we_${endpoint}`, 4));
      }
    }
    const silent = scheduler.takeStartable(NOW);
    assert.equal(silent.length, 7 * LIMITS.perBusiness);
    for (const count of Object.values(perBusiness(silent))) assert.equal(count, LIMITS.perBusiness);
    const other = deliveries('biz_other', 'we_other', 1);
    scheduler.hold(other);
    assert.deepEqual(scheduler.takeStartable(NOW), other);
  });

  test('many silent businesses, each under its share: their attempts stall and another business starts', () => {
    const scheduler = new DeliveryScheduler(LIMITS);
    // 20 businesses with one silent endpoint each: 80 attempts wanted, each business at 4 (under
    // its share of 8), so the reserved slots do not hold them back.
    for (let business = 0; business < 20; business++)
      scheduler.hold(deliveries(`biz_${business}`, `we_${business}`, 4));
    assert.equal(scheduler.takeStartable(NOW).length, LIMITS.concurrency);
    const other = deliveries('biz_other', 'we_other', 1);
    scheduler.hold(other);
    assert.deepEqual(scheduler.takeStartable(NOW + 100), []);
    // The worker is woken when the oldest attempt stalls.
    assert.equal(scheduler.msUntilStall(NOW + 100), LIMITS.stalledAfterMs - 100);
    const later = scheduler.takeStartable(NOW + LIMITS.stalledAfterMs);
    assert.ok(later.includes(other[0]!), 'the other business starts as soon as a slot frees');
    // The rest of the silent ones went out too: stalled attempts wait on their receivers alone.
    assert.equal(scheduler.inFlight, 81);
    assert.equal(scheduler.working, 17);
  });

  test('attempts in flight, stalled ones included, stay under maxInFlight', () => {
    const scheduler = new DeliveryScheduler({ ...LIMITS, concurrency: 10, maxInFlight: 25, reserved: 0 });
    for (let business = 0; business < 10; business++)
      scheduler.hold(deliveries(`biz_${business}`, `we_${business}`, 4));
    assert.equal(scheduler.takeStartable(NOW).length, 10);
    assert.equal(scheduler.takeStartable(NOW + 500).length, 10);
    assert.equal(scheduler.takeStartable(NOW + 1000).length, 5);
    assert.equal(scheduler.inFlight, 25);
    assert.equal(scheduler.msUntilStall(NOW + 1000), 500);
    assert.deepEqual(scheduler.takeStartable(NOW + 5000), []);
  });

  test('a stalled attempt that ends frees its endpoint and business, and counts only once', () => {
    const scheduler = new DeliveryScheduler({ ...LIMITS, concurrency: 1, reserved: 0 });
    scheduler.hold(deliveries('biz_a', 'we_1', 2));
    const [first] = scheduler.takeStartable(NOW);
    const [second] = scheduler.takeStartable(NOW + 500);
    assert.ok(first && second);
    scheduler.finished(first);
    assert.equal(scheduler.inFlight, 1);
    assert.equal(scheduler.working, 1);
    scheduler.finished(second);
    assert.equal(scheduler.inFlight, 0);
    assert.equal(scheduler.working, 0);
    assert.equal(scheduler.msUntilStall(NOW + 600), null);
  });

  test('one business alone uses the slots beyond its share (work-conserving)', () => {
    const scheduler = new DeliveryScheduler(LIMITS);
    for (let endpoint = 0; endpoint < 5; endpoint++) scheduler.hold(deliveries('biz_a', `we_${endpoint}`, 10));
    // 5 endpoints x 4 in flight: more than its share of 8, and all of it.
    assert.equal(scheduler.takeStartable(NOW).length, 20);
  });

  test('sandbox and live of one business are two shares', () => {
    const scheduler = new DeliveryScheduler({ ...LIMITS, concurrency: 20, reserved: 20 });
    scheduler.hold(deliveries('biz_a', 'we_live', 4));
    scheduler.hold(deliveries('biz_a', 'we_live_2', 4));
    scheduler.hold(deliveries('biz_a', 'we_test', 4, 'test'));
    scheduler.hold(deliveries('biz_a', 'we_test_2', 4, 'test'));
    assert.equal(scheduler.takeStartable(NOW).length, 16);
    assert.equal(scheduler.inFlightForBusiness({ business_id: 'biz_a', environment: 'live' }), 8);
    assert.equal(scheduler.inFlightForBusiness({ business_id: 'biz_a', environment: 'test' }), 8);
  });

  test('businesses take turns: a backlog does not go before a later business', () => {
    const scheduler = new DeliveryScheduler({ ...LIMITS, concurrency: 2, reserved: 0 });
    scheduler.hold(deliveries('biz_big', 'we_big', 4));
    scheduler.hold(deliveries('biz_big', 'we_big_2', 4));
    scheduler.hold(deliveries('biz_small', 'we_small', 1));
    const started = scheduler.takeStartable(NOW);
    assert.deepEqual(
      started.map((delivery) => delivery.business_id),
      ['biz_big', 'biz_small'],
    );
  });

  test('a stopping worker takes back what is queued; what is in flight stays held', () => {
    const scheduler = new DeliveryScheduler(LIMITS);
    scheduler.hold(deliveries('biz_a', 'we_1', 6));
    const sending = scheduler.takeStartable(NOW);
    const queued = scheduler.takeQueued();
    assert.equal(queued.length, 2);
    assert.deepEqual(scheduler.heldIds().sort(), sending.map((delivery) => delivery.id).sort());
    assert.deepEqual(scheduler.takeStartable(NOW), []);
  });

  test('fast endpoints: answered quickly in the last 10 s, never rate-limited ones', () => {
    const scheduler = new DeliveryScheduler(LIMITS);
    const now = 1_000_000;
    scheduler.noteAnswer('we_fast', FAST_ANSWER_MS, false, now);
    scheduler.noteAnswer('we_slow', FAST_ANSWER_MS + 1, false, now);
    scheduler.noteAnswer('we_paced', 5, true, now);
    scheduler.noteAnswer('we_old', 5, false, now - 10_001);
    assert.deepEqual(scheduler.fastEndpoints(now), ['we_fast']);
    scheduler.noteAnswer('we_fast', 1000, false, now + 1);
    assert.deepEqual(scheduler.fastEndpoints(now + 1), []);
  });
});
