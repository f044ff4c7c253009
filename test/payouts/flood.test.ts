import assert from 'node:assert/strict';
import pino from 'pino';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { periodicTasks, startWorker } from '../../src/worker/worker.js';
import {
  expectError,
  expectStatus,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { patience } from '../support/patience.js';
import { createIntent } from '../intents/support.js';
import { freshPhone } from '../orders/support.js';
import { assertLedgerSound, BALANCE, fold } from '../payments/support.js';
import { createPayout, earn, getPayout, newPhone, PAYOUTS, payoutTo, sendPayouts } from './support.js';

const BATCH = `${PAYOUTS}/batch`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A live business paid `amount` centimes by a live wallet of its own, through the hosted checkout. */
async function earnLive(t: TestApp, business: TestBusiness, amount: number): Promise<void> {
  const phone = freshPhone();
  expectStatus(await t.admin('POST', '/wallets', { phone, pin: '2468', balance: amount, environment: 'live' }), 201);
  const intent = await createIntent(t, business.keys.secretLive, { amount });
  expectStatus(
    await t.request('POST', `/checkout/intents/${intent.shortCode}/pay`, { body: { phone, pin: '2468' } }),
    200,
  );
}

/** A live wallet to pay out to. */
async function liveWallet(t: TestApp): Promise<string> {
  const phone = freshPhone();
  expectStatus(await t.admin('POST', '/wallets', { phone, pin: '2468', balance: 0, environment: 'live' }), 201);
  return phone;
}

const pendingCount = async (t: TestApp, key: string): Promise<number> => {
  const listed = await t.request('GET', `${PAYOUTS}?status=PENDING&limit=1`, { key });
  expectStatus(listed, 200);
  return listed.body.data.total;
};

const batchOf = (count: number, amount = 100) => Array.from({ length: count }, () => payoutTo(newPhone(), amount));

/** Issue 47 item 1: one merchant's sandbox flood holds up nobody else's payouts. */
describe('payouts under a flood', () => {
  let t: TestApp;

  beforeAll(async () => {
    // The flooder has the default limits: a test key's 100 requests a minute, 2,000 sandbox
    // payouts waiting. The other merchant's live key polls its payouts freely.
    t = await startTestApp({ config: { RATE_LIMIT_LIVE_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  test("12 batches from one merchant's sandbox: another merchant's live payouts are sent and folded promptly", async () => {
    const flooder = await t.createBusiness({ name: 'Flooding shop' });
    const other = await t.createBusiness({ name: 'Live shop', approveLive: true });
    await earn(t, flooder.keys.secretTest, 5_000_000);
    await earnLive(t, other, 100_000);
    const destination = await liveWallet(t);
    const worker = startWorker(t.runtime, pino({ level: 'silent' }), periodicTasks);
    try {
      const floodBatch = () =>
        t.request('POST', BATCH, {
          key: flooder.keys.secretTest,
          body: { items: batchOf(1000) },
          idempotencyKey: true,
        });
      // 12 batches of 1,000 at once, then one a second while the other merchant pays out: all
      // under the test key's rate limit, whatever of them the bound takes.
      const answers = await Promise.all(Array.from({ length: 12 }, floodBatch));
      let flooding = true;
      const keepFlooding = (async () => {
        while (flooding) {
          answers.push(await floodBatch());
          await sleep(1000);
        }
      })();
      // Each payout of the other merchant must be sent, and its reservation folded into the
      // balance (`balanceAfter`), promptly, while the flooder's payouts wait.
      const probes: { sentMs: number; foldedMs: number; floodWaiting: number }[] = [];
      try {
        for (let i = 0; i < 5; i++) {
          const created = await createPayout(t, other.keys.secretLive, payoutTo(destination, 1_000 + i));
          expectStatus(created, 201);
          const begun = Date.now();
          const reference = created.body.data.referenceNumber;
          const status = await waitUntil(
            async () => {
              const payout = await getPayout(t, other.keys.secretLive, reference);
              return payout.status !== 'PENDING' && payout.status;
            },
            `${reference} sent`,
            120_000,
          );
          assert.equal(status, 'PAID');
          const sentMs = Date.now() - begun;
          const floodWaiting = await pendingCount(t, flooder.keys.secretTest);
          await waitUntil(
            async () => {
              const own = await t.request('GET', `${BALANCE}/transactions?source=${reference}&limit=10`, {
                key: other.keys.secretLive,
              });
              expectStatus(own, 200);
              const items: { balanceAfter: number | null }[] = own.body.data.items;
              return items.length > 0 && items.every((item) => item.balanceAfter !== null);
            },
            `${reference} folded`,
            120_000,
          );
          probes.push({ sentMs, foldedMs: Date.now() - begun, floodWaiting });
          await sleep(300);
        }
      } finally {
        flooding = false;
        await keepFlooding;
      }
      const accepted = answers.filter((answer) => answer.status === 201).length;
      for (const answer of answers) {
        if (answer.status !== 201) expectError(answer, 429, 'TOO_MANY_PENDING_PAYOUTS');
      }
      const figures =
        `${accepted} of ${answers.length} batches accepted; ` +
        probes.map((p) => `sent ${p.sentMs} ms, folded ${p.foldedMs} ms, ${p.floodWaiting} waiting`).join('; ');
      // Not behind the flood: the flooder's payouts were waiting when each was sent.
      for (const probe of probes) assert.ok(probe.floodWaiting > 0, `sent ahead of the flood (${figures})`);
      // Generous limits: the docs promise about a second.
      for (const probe of probes) {
        assert.ok(probe.sentMs <= patience(3_000), `sent within 3 s (${figures})`);
        assert.ok(probe.foldedMs <= patience(4_000), `folded within 4 s (${figures})`);
      }
      // The rest of the flood sent (read from the table: the flooder's key has spent its requests).
      await waitUntil(
        async () =>
          (await t.runtime.db
            .selectFrom('payouts')
            .select('reference')
            .where('business_id', '=', flooder.id)
            .where('status', '=', 'PENDING')
            .executeTakeFirst()) === undefined,
        'the flood sent',
        120_000,
      );
    } finally {
      await worker.stop();
    }
    await fold(t);
    await assertLedgerSound(t);
  });
});

/** Decision 067: a business's sandbox payouts waiting to be sent are bounded, on both routes. */
describe('the bound on pending sandbox payouts', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  const balance = async (key = sk) => (await t.request('GET', BALANCE, { key })).body.data.available;

  beforeAll(async () => {
    t = await startTestApp({ config: { SANDBOX_PENDING_PAYOUTS_MAX: '5', RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Bounded shop', approveLive: true });
    sk = business.keys.secretTest;
    await earn(t, sk, 100_000);
    await earnLive(t, business, 10_000);
  });
  afterAll(() => t.close());

  test('beyond the bound: 429 TOO_MANY_PENDING_PAYOUTS with Retry-After, nothing reserved; a retry with the same key is carried out once they are sent', async () => {
    expectStatus(await t.request('POST', BATCH, { key: sk, body: { items: batchOf(4) }, idempotencyKey: true }), 201);
    expectStatus(await createPayout(t, sk, payoutTo(newPhone(), 100)), 201);
    const before = await balance();

    const single = await createPayout(t, sk, payoutTo(newPhone(), 100), 'bounded-single');
    expectError(single, 429, 'TOO_MANY_PENDING_PAYOUTS');
    assert.match(single.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
    assert.match(single.body.error.message, /5 sandbox payout\(s\) of this business are waiting/);
    const batchBody = { items: batchOf(2) };
    const batch = await t.request('POST', BATCH, { key: sk, body: batchBody, idempotencyKey: 'bounded-batch' });
    expectError(batch, 429, 'TOO_MANY_PENDING_PAYOUTS');
    assert.match(batch.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
    assert.equal(await balance(), before, 'nothing reserved');
    assert.equal(await pendingCount(t, sk), 5, 'nothing created');

    // Live is bounded by its money, not by the sandbox's queue.
    expectStatus(await createPayout(t, business.keys.secretLive, payoutTo(await liveWallet(t), 100)), 201);

    // Once the worker has sent them, the same requests under the same keys go through: a 429 is
    // not kept under its key.
    await sendPayouts(t);
    expectStatus(await createPayout(t, sk, payoutTo(newPhone(), 100), 'bounded-single'), 201);
    const retried = await t.request('POST', BATCH, { key: sk, body: batchBody, idempotencyKey: 'bounded-batch' });
    expectStatus(retried, 201);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    assert.equal(await pendingCount(t, sk), 3);
    await sendPayouts(t);
    await fold(t);
    await assertLedgerSound(t);
  });

  test('a batch larger than the bound on an empty queue is refused whole', async () => {
    const refused = await t.request('POST', BATCH, { key: sk, body: { items: batchOf(6) }, idempotencyKey: true });
    expectError(refused, 429, 'TOO_MANY_PENDING_PAYOUTS');
    assert.equal(await pendingCount(t, sk), 0);
  });
});
