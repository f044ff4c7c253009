import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import { verifyWebhook } from '@commerce-developer-api/sdk/webhooks';
import { Webhook } from 'standardwebhooks';
import { ConfigError, loadConfig } from '../../src/config.js';
import { MAX_ATTEMPTS, RETRY_GAPS_SECONDS, RETRY_JITTER } from '../../src/modules/webhooks/delivery/retry-schedule.js';
import { periodicTasks } from '../../src/worker/worker.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { startReceiver, type ReceivedRequest, type Receiver } from '../support/receiver.js';
import { signedIn } from '../dashboard/support.js';
import { newWallet } from '../links/support.js';
import { INTENTS, ageRequest, askPayment, cancelRequest, createIntent, createRequest } from './support.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const SCALE = 0.0001;
const PAY_URL = 'https://pay.example.test';
const NAME = 'Boutique Tevragh Zeina';

/** The registered task, as the worker runs it. */
const hookTask = periodicTasks.find((task) => task.name === 'operator-hook')!;

function noticeOf(t: TestApp, requestId: string) {
  return t.runtime.db
    .selectFrom('operator_notices')
    .selectAll()
    .where('request_id', '=', requestId)
    .executeTakeFirstOrThrow();
}

/** The notice's next attempt due now (the retry's wait already checked), so the next run takes it. */
async function makeDue(t: TestApp, requestId: string): Promise<void> {
  await t.runtime.db
    .updateTable('operator_notices')
    .set({ next_attempt_at: new Date(Date.now() - 1000) })
    .where('request_id', '=', requestId)
    .execute();
}

describe('the operator notification hook (issue 51 item 3, decision 078)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let business: TestBusiness;
  let sk: string;
  /** The receiver's requests about one payment request (other tests' notices may arrive in the same run). */
  const about = (id: string) => receiver.requests.filter((request) => JSON.parse(request.body).id === id);

  beforeAll(async () => {
    receiver = await startReceiver('/operator/notify');
    t = await startTestApp({
      config: {
        OPERATOR_HOOK_URL: receiver.url,
        OPERATOR_HOOK_SECRET: SECRET,
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_RETRY_SCALE: String(SCALE),
        PAY_URL,
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
      },
      configOverrides: { webhookTimeoutMs: 2000 },
    });
    business = await t.createBusiness({ name: NAME });
    sk = business.keys.secretTest;
  });
  beforeEach(() => {
    receiver.answer = () => ({ status: 200, body: 'ok' });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const run = () => hookTask.run(t.runtime);

  async function verified(request: ReceivedRequest) {
    const headers = request.headers as Record<string, string>;
    // The standardwebhooks library, as an operator's receiver would use it, and the SDK's verifier.
    const payload = new Webhook(SECRET).verify(request.body, headers) as Record<string, unknown>;
    assert.deepEqual(await verifyWebhook(request.body, headers, SECRET), payload);
    return { payload, headers };
  }

  test('a new sandbox request reaches the hook, signed with the operator secret, with what an SMS needs', async () => {
    const phone = (await newWallet(t, 50_000)).phone;
    const intent = await createIntent(t, sk, { amount: 4200 });
    const created = await createRequest(t, sk, intent.referenceNumber, { phone, message: 'Table 4', expiresIn: 600 });
    const queued = await noticeOf(t, created.id);
    assert.equal(queued.status, 'PENDING');
    assert.equal(queued.attempts, 0);

    const result = await run();
    assert.equal((result as { sent: number }).sent >= 1, true);
    const [request] = about(created.id);
    assert.ok(request, 'the hook got the notice');
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/operator/notify');
    const { payload, headers } = await verified(request);
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['webhook-id'], queued.id);
    assert.deepEqual(payload, {
      type: 'payment_request.created',
      id: created.id,
      phone,
      merchant_name: NAME,
      merchant_verified: false,
      amount: 4200,
      currency: 'MRU',
      message: 'Table 4',
      expires_at: created.expiresAt,
      created_at: created.createdAt,
      wallet_url: `${PAY_URL}/wallet?mode=test`,
      sandbox: true,
    });
    // A signature made with another secret does not verify.
    assert.throws(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(request.body, headers));

    const sent = await noticeOf(t, created.id);
    assert.equal(sent.status, 'SENT');
    assert.equal(sent.attempts, 1);
    assert.equal(sent.last_status_code, 200);
    assert.ok(sent.sent_at);
    await run();
    assert.equal(about(created.id).length, 1, 'a sent notice is not sent again');
  });

  test('a live request: sandbox false, the wallet link without the sandbox mode', async () => {
    const live = business.keys.secretLive;
    const wallet = await newWallet(t, 5000, 'live');
    const intent = await createIntent(t, live, { amount: 900 });
    const created = await createRequest(t, live, intent.referenceNumber, { phone: wallet.phone });
    await run();
    const [request] = about(created.id);
    assert.ok(request);
    const { payload } = await verified(request);
    assert.equal(payload.sandbox, false);
    // Live: the name the operator verified at live approval (migration 040's backfill: the name then).
    assert.equal(payload.merchant_verified, true);
    assert.equal(payload.merchant_name, NAME);
    assert.equal(payload.phone, wallet.phone);
    assert.equal(payload.message, null);
    assert.equal(payload.wallet_url, `${PAY_URL}/wallet`);
    expectStatus(await cancelRequest(t, live, created.id), 200);
  });

  test("a request asked from the dashboard's form is told too", async () => {
    const { client } = await signedIn(t, business.id);
    const intent = await createIntent(t, sk, { amount: 2200 });
    const phone = (await newWallet(t, 50_000)).phone;
    const path = `/dashboard/payments/${intent.referenceNumber}`;
    const sent = await client.submit(path, `${path}/requests`, { expiresIn: '5', phone });
    assert.equal(sent.status, 303, sent.html.slice(0, 500));
    const listed = await t.request('GET', `${INTENTS}/${intent.referenceNumber}/requests`, { key: sk });
    const created = listed.body.data.items[0];
    await run();
    const [request] = about(created.id);
    assert.ok(request, 'the hook got the notice');
    const { payload } = await verified(request);
    assert.deepEqual(
      [payload.phone, payload.amount, payload.merchant_name, payload.wallet_url],
      [phone, 2200, NAME, `${PAY_URL}/wallet?mode=test`],
    );
    expectStatus(await cancelRequest(t, sk, created.id), 200);
  });

  test('a receiver that answers 500 gets it again on the retry schedule, same id and bytes; then SENT', async () => {
    const intent = await createIntent(t, sk, { amount: 1500 });
    const created = await createRequest(t, sk, intent.referenceNumber, { phone: (await newWallet(t, 50_000)).phone });
    let calls = 0;
    receiver.answer = () => (++calls === 1 ? { status: 500, body: 'gateway down' } : { status: 200, body: 'ok' });
    const before = Date.now();
    await run();
    const failed = await noticeOf(t, created.id);
    assert.equal(failed.status, 'PENDING');
    assert.equal(failed.attempts, 1);
    assert.equal(failed.last_status_code, 500);
    assert.match(failed.last_error ?? '', /NON_2XX: HTTP 500/);
    // The delivery engine's first gap, scaled (WEBHOOK_RETRY_SCALE) and jittered.
    const gapMs = RETRY_GAPS_SECONDS[0] * 1000 * SCALE * (1 + RETRY_JITTER);
    assert.ok(failed.next_attempt_at.getTime() <= Date.now() + gapMs, 'due again after the first gap');
    assert.ok(failed.next_attempt_at.getTime() >= before);

    await new Promise((resolve) => setTimeout(resolve, gapMs + 20));
    await run();
    const [first, second] = about(created.id);
    assert.ok(first && second, 'two attempts');
    assert.equal(second.body, first.body);
    assert.equal(second.headers['webhook-id'], first.headers['webhook-id']);
    await verified(second);
    const sent = await noticeOf(t, created.id);
    assert.deepEqual([sent.status, sent.attempts, sent.last_status_code, sent.last_error], ['SENT', 2, 200, null]);
  });

  test('after the last attempt the notice is FAILED and no longer sent', async () => {
    const intent = await createIntent(t, sk, { amount: 1600 });
    const created = await createRequest(t, sk, intent.referenceNumber, {
      phone: (await newWallet(t, 50_000)).phone,
      expiresIn: 900,
    });
    receiver.answer = (request) =>
      JSON.parse(request.body).id === created.id ? { status: 503, body: 'no' } : { status: 200, body: 'ok' };
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await makeDue(t, created.id);
      await run();
    }
    const notice = await noticeOf(t, created.id);
    assert.deepEqual([notice.status, notice.attempts, notice.last_status_code], ['FAILED', MAX_ATTEMPTS, 503]);
    await makeDue(t, created.id);
    await run();
    assert.equal(about(created.id).length, MAX_ATTEMPTS);
    expectStatus(await cancelRequest(t, sk, created.id), 200);
  });

  test('a request that ended, or whose time is up, before its notice went out is not sent: EXPIRED', async () => {
    const phone = (await newWallet(t, 50_000)).phone;
    const cancelled = await createRequest(t, sk, (await createIntent(t, sk, { amount: 700 })).referenceNumber, {
      phone,
    });
    expectStatus(await cancelRequest(t, sk, cancelled.id), 200);
    const aged = await createRequest(t, sk, (await createIntent(t, sk, { amount: 800 })).referenceNumber, { phone });
    await ageRequest(t, aged.id);
    // One that failed once and whose request then ended is not retried either.
    const retried = await createRequest(t, sk, (await createIntent(t, sk, { amount: 900 })).referenceNumber, {
      phone,
    });
    receiver.answer = (request) =>
      JSON.parse(request.body).id === retried.id ? { status: 500 } : { status: 200, body: 'ok' };
    // The first two are skipped; only the third is sent (and fails).
    await t.runtime.db
      .updateTable('operator_notices')
      .set({ next_attempt_at: new Date(Date.now() + 60_000) })
      .where('request_id', 'in', [cancelled.id, aged.id])
      .execute();
    await run();
    assert.equal(about(retried.id).length, 1);
    expectStatus(await cancelRequest(t, sk, retried.id), 200);
    for (const id of [cancelled.id, aged.id, retried.id]) await makeDue(t, id);
    await run();
    for (const id of [cancelled.id, aged.id, retried.id]) {
      assert.equal((await noticeOf(t, id)).status, 'EXPIRED', id);
    }
    assert.deepEqual(
      [about(cancelled.id).length, about(aged.id).length, about(retried.id).length],
      [0, 0, 1],
      'nothing more was sent',
    );
  });

  test('a refused request queues nothing: the notice is written in the request transaction', async () => {
    const intent = await createIntent(t, sk, { amount: 1000 });
    const phone = (await newWallet(t, 50_000)).phone;
    const created = await createRequest(t, sk, intent.referenceNumber, { phone });
    const before = await t.runtime.db
      .selectFrom('operator_notices')
      .select((eb) => eb.fn.countAll().as('n'))
      .execute();
    expectError(await askPayment(t, sk, intent.referenceNumber, { phone }), 409, 'PAYMENT_REQUEST_PENDING');
    const after = await t.runtime.db
      .selectFrom('operator_notices')
      .select((eb) => eb.fn.countAll().as('n'))
      .execute();
    assert.equal(Number(after[0]!.n), Number(before[0]!.n));
    expectStatus(await cancelRequest(t, sk, created.id), 200);
  });
});

describe('the operator hook off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  test('without OPERATOR_HOOK_URL nothing is queued and the task sends nothing', async () => {
    assert.equal(t.runtime.config.operatorHook, undefined);
    const business = await t.createBusiness();
    const intent = await createIntent(t, business.keys.secretTest, { amount: 1000 });
    await createRequest(t, business.keys.secretTest, intent.referenceNumber, {
      phone: (await newWallet(t, 50_000)).phone,
    });
    const rows = await t.runtime.db.selectFrom('operator_notices').selectAll().execute();
    assert.deepEqual(rows, []);
    assert.deepEqual(await hookTask.run(t.runtime), { sent: 0, retrying: 0, failed: 0, expired: 0 });
  });
});

describe('the operator hook settings', () => {
  const base = { LOG_LEVEL: 'silent' };

  test('a URL without a valid whsec_ secret refuses to start, naming the setting', () => {
    assert.throws(
      () => loadConfig({ ...base, OPERATOR_HOOK_URL: 'https://sms.example.test/hook' }),
      (error: unknown) =>
        error instanceof ConfigError && /OPERATOR_HOOK_SECRET: required when OPERATOR_HOOK_URL/.test(error.message),
    );
    for (const secret of ['not-a-secret', 'whsec_', `whsec_${randomBytes(8).toString('base64')}`, 'whsec_***']) {
      assert.throws(
        () => loadConfig({ ...base, OPERATOR_HOOK_URL: 'https://sms.example.test/hook', OPERATOR_HOOK_SECRET: secret }),
        (error: unknown) =>
          error instanceof ConfigError && /OPERATOR_HOOK_SECRET: must be a Standard Webhooks/.test(error.message),
        secret,
      );
    }
  });

  test('plain http only with WEBHOOK_ALLOW_PRIVATE; a valid pair turns the hook on; unset is off', () => {
    const pair = { OPERATOR_HOOK_URL: 'http://127.0.0.1:9999/hook', OPERATOR_HOOK_SECRET: SECRET };
    assert.throws(
      () => loadConfig({ ...base, ...pair }),
      (error: unknown) => error instanceof ConfigError && /OPERATOR_HOOK_URL=.*must use https/.test(error.message),
    );
    assert.deepEqual(loadConfig({ ...base, ...pair, WEBHOOK_ALLOW_PRIVATE: 'true' }).operatorHook, {
      url: pair.OPERATOR_HOOK_URL,
      secret: SECRET,
    });
    assert.equal(loadConfig({ ...base, OPERATOR_HOOK_SECRET: SECRET }).operatorHook, undefined);
    assert.equal(loadConfig(base).operatorHook, undefined);
    assert.throws(() => loadConfig({ ...base, OPERATOR_HOOK_URL: 'ftp://x' }), ConfigError);
  });
});
