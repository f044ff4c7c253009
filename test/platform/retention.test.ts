import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { ConfigError, loadConfig, RETENTION_BATCHES } from '../../src/config.js';
import { deleteInBatches } from '../../src/db/batched-delete.js';
import { firstIdAt, randomBase62 } from '../../src/lib/ids.js';
import { deleteEndedSessions } from '../../src/modules/dashboard/sessions.js';
import { deleteEndedRequests } from '../../src/modules/requests/retention.js';
import { deleteEndedWalletSessions } from '../../src/modules/walletapp/sessions.js';
import { deleteOldDeliveries } from '../../src/modules/webhooks/retention.js';
import { createUser } from '../dashboard/support.js';
import { ledgerIsSound, newWallet } from '../links/support.js';
import { answer, cancelRequest, createIntent, createRequest, PAYMENT_REQUESTS } from '../requests/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { DELIVERIES, webhookHelpers } from '../webhooks/support.js';
import { periodicTasks } from '../../src/worker/worker.js';

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);
const ONE_BATCH_OF_TWO = { rows: 2, maxBatches: 1, maxMs: 60_000 };

describe('retention settings (issue 55)', () => {
  test('defaults, and a start refused when a kept thing would outlive what it belongs to', () => {
    assert.deepEqual(
      { ...loadConfig({}).retention, batches: undefined },
      {
        webhookAttemptDays: 30,
        webhookDeliveryDays: 90,
        eventDays: 90,
        dashboardSessionDays: 30,
        paymentRequestDays: 90,
        batches: undefined,
      },
    );
    assert.throws(
      () => loadConfig({ EVENT_RETENTION_DAYS: '29' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /EVENT_RETENTION_DAYS=29: must be >= 30/);
        return true;
      },
    );
    assert.throws(
      () => loadConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: '120' }),
      /WEBHOOK_DELIVERY_RETENTION_DAYS=120: must not be more than EVENT_RETENTION_DAYS=90/,
    );
    assert.throws(
      () => loadConfig({ WEBHOOK_ATTEMPT_RETENTION_DAYS: '60', WEBHOOK_DELIVERY_RETENTION_DAYS: '45' }),
      /WEBHOOK_ATTEMPT_RETENTION_DAYS=60: must not be more than WEBHOOK_DELIVERY_RETENTION_DAYS=45/,
    );
    assert.throws(() => loadConfig({ PAYMENT_REQUEST_RETENTION_DAYS: '0' }), /PAYMENT_REQUEST_RETENTION_DAYS=0/);
    const longer = loadConfig({ EVENT_RETENTION_DAYS: '400', WEBHOOK_DELIVERY_RETENTION_DAYS: '400' }).retention;
    assert.equal(longer.eventDays, 400);
    assert.equal(longer.webhookDeliveryDays, 400);
  });
});

describe('retention of rows (issue 55, decision 093)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let endpointId: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
    const hooks = webhookHelpers(t);
    endpointId = (await hooks.createEndpoint(sk, { url: 'https://93.184.216.34/hook', events: ['payment.created'] }))
      .id;
  });
  afterAll(() => t.close());

  /**
   * A delivery of an event made `createdDaysAgo` days ago (its id of that moment, as newId makes
   * it), ended `completedDaysAgo` days ago (null: never, or not written), with `attempts` attempts.
   */
  async function delivery(
    status: 'SUCCEEDED' | 'DEAD' | 'FAILED',
    createdDaysAgo: number,
    completedDaysAgo: number | null,
    attempts = 2,
  ): Promise<string> {
    const createdAt = daysAgo(createdDaysAgo);
    const eventId = firstIdAt('evt', createdAt) + randomBase62(14);
    const subject = `pi_${randomBase62(12)}`;
    await sql`INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
      VALUES (${eventId}, ${business.id}, 'test', 'payment.created', ${subject}, '{}', ${createdAt}, 1)`.execute(
      t.runtime.db,
    );
    const id = `dlv_${randomBase62(20)}`;
    await t.runtime.db
      .insertInto('webhook_deliveries')
      .values({
        id,
        event_id: eventId,
        endpoint_id: endpointId,
        business_id: business.id,
        environment: 'test',
        event: 'payment.created',
        status,
        dead_reason: status === 'DEAD' ? 'MAX_ATTEMPTS' : null,
        attempt_count: attempts,
        attempts_total: attempts,
        next_attempt_at: createdAt,
        completed_at: completedDaysAgo === null ? null : daysAgo(completedDaysAgo),
        created_at: createdAt,
        updated_at: createdAt,
      })
      .execute();
    for (let attempt = 1; attempt <= attempts; attempt++) {
      await t.runtime.db
        .insertInto('webhook_attempts')
        .values({ delivery_id: id, attempt, started_at: createdAt, status_code: 500, duration_ms: 10 })
        .execute();
    }
    return id;
  }

  const deliveriesLeft = async (ids: string[]) =>
    (await t.runtime.db.selectFrom('webhook_deliveries').select('id').where('id', 'in', ids).execute())
      .map((row) => row.id)
      .sort();
  const attemptsOf = async (ids: string[]) =>
    Number(
      (
        await t.runtime.db
          .selectFrom('webhook_attempts')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('delivery_id', 'in', ids)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const listTotal = async (query = '') => {
    const response = await t.request('GET', `${DELIVERIES}${query}`, { key: sk });
    expectStatus(response, 200);
    return response.body.data.total as number;
  };
  const tableCount = async (status?: string) =>
    Number(
      (
        await t.runtime.db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('business_id', '=', business.id)
          .$if(status !== undefined, (qb) => qb.where('status', '=', status as 'SUCCEEDED'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('deliveries: the finished ones past the setting go with their attempts; the rest stay; list totals stay exact', async () => {
    const gone = [
      await delivery('SUCCEEDED', 100, 99),
      await delivery('DEAD', 100, 95, 8),
      // Finished before completed_at was written: its creation counts.
      await delivery('SUCCEEDED', 100, null, 1),
    ];
    const kept = [
      // Brought back by a recover and dead again 10 days ago: its 90 days run from then.
      await delivery('DEAD', 100, 10, 3),
      // Still waiting for its next attempt, however old.
      await delivery('FAILED', 100, null),
      await delivery('SUCCEEDED', 10, 10),
      await delivery('SUCCEEDED', 91, 89),
    ];
    assert.equal(await listTotal(), await tableCount());
    const run = await deleteOldDeliveries(t.runtime.db, 90, RETENTION_BATCHES);
    assert.equal(run.deleted, 3);
    assert.equal(run.done, true);
    assert.deepEqual(await deliveriesLeft([...gone, ...kept]), [...kept].sort());
    assert.equal(await attemptsOf(gone), 0);
    assert.equal(await attemptsOf(kept), 3 + 2 + 2 + 2);
    // The totals come from the counts the delete's trigger adjusted, not from counting rows.
    assert.equal(await listTotal(), await tableCount());
    for (const status of ['SUCCEEDED', 'DEAD', 'FAILED']) {
      assert.equal(await listTotal(`?status=${status}`), await tableCount(status), status);
    }
    expectError(await t.request('GET', `${DELIVERIES}/${gone[0]}`, { key: sk }), 404, 'DELIVERY_NOT_FOUND');
    // Again: nothing more to do.
    assert.deepEqual(await deleteOldDeliveries(t.runtime.db, 90, RETENTION_BATCHES), {
      deleted: 0,
      batches: 1,
      done: true,
    });
  });

  test('deliveries: a run stopped by its budget leaves whole deliveries, and the next run finishes', async () => {
    const old = [];
    for (let i = 0; i < 5; i++) old.push(await delivery(i % 2 ? 'DEAD' : 'SUCCEEDED', 120, 119, 2));
    const first = await deleteOldDeliveries(t.runtime.db, 90, ONE_BATCH_OF_TWO);
    assert.deepEqual(first, { deleted: 2, batches: 1, done: false });
    const left = await deliveriesLeft(old);
    assert.equal(left.length, 3);
    // Every delivery left has all its attempts: none was half deleted.
    assert.equal(await attemptsOf(left), 3 * 2);
    assert.equal(await attemptsOf(old), 3 * 2);
    assert.equal(await listTotal(), await tableCount());
    const second = await deleteOldDeliveries(t.runtime.db, 90, RETENTION_BATCHES);
    assert.equal(second.deleted, 3);
    assert.deepEqual(await deliveriesLeft(old), []);
    assert.equal(await attemptsOf(old), 0);
    assert.equal(await listTotal(), await tableCount());
  });

  test('a batch that fails halfway (a killed run) leaves its rows whole: each batch is its own transaction', async () => {
    const id = await delivery('SUCCEEDED', 120, 119, 2);
    await assert.rejects(
      deleteInBatches(t.runtime.db, RETENTION_BATCHES, async (trx) => {
        await sql`DELETE FROM webhook_attempts WHERE delivery_id = ${id}`.execute(trx);
        throw new Error('killed');
      }),
      /killed/,
    );
    assert.equal(await attemptsOf([id]), 2);
    assert.equal((await deleteOldDeliveries(t.runtime.db, 90, RETENTION_BATCHES)).deleted, 1);
    assert.equal(await attemptsOf([id]), 0);
  });

  test('payment requests: unpaid ones ended past the setting go (with their notice); paid ones and their payments stay', async () => {
    const wallet = await newWallet(t, 100_000);
    const paidIntent = await createIntent(t, sk, { amount: 3000 });
    const declined = await createRequest(t, sk, paidIntent.referenceNumber, { phone: wallet.phone });
    await answer(t, wallet.phone, declined.id, 'DECLINED');
    const approved = await createRequest(t, sk, paidIntent.referenceNumber, { phone: wallet.phone });
    await answer(t, wallet.phone, approved.id, 'APPROVED');
    const otherIntent = await createIntent(t, sk, { amount: 2000 });
    const cancelled = await createRequest(t, sk, otherIntent.referenceNumber, { phone: wallet.phone });
    expectStatus(await cancelRequest(t, sk, cancelled.id), 200);
    const thirdIntent = await createIntent(t, sk, { amount: 1000 });
    const recent = await createRequest(t, sk, thirdIntent.referenceNumber, { phone: wallet.phone });
    await answer(t, wallet.phone, recent.id, 'DECLINED');
    const pending = await createRequest(t, sk, otherIntent.referenceNumber, { phone: wallet.phone });

    const old = [declined.id, approved.id, cancelled.id];
    await t.runtime.db
      .updateTable('payment_requests')
      .set({ ended_at: daysAgo(100), created_at: daysAgo(100) })
      .where('id', 'in', old)
      .execute();
    await t.runtime.db
      .updateTable('payment_requests')
      .set({ created_at: daysAgo(100) })
      .where('id', '=', pending.id)
      .execute();
    await sql`INSERT INTO operator_notices (id, request_id, environment, body, status, next_attempt_at, created_at, updated_at)
      VALUES ('ntc_retention', ${declined.id}, 'test', '{}', 'EXPIRED', now(), now(), now())`.execute(t.runtime.db);
    const payments = await t.runtime.db
      .selectFrom('payment_requests')
      .select('payment_id')
      .where('id', 'in', [...old, recent.id])
      .execute();

    const first = await deleteEndedRequests(t.runtime.db, 90, { rows: 1, maxBatches: 1, maxMs: 60_000 });
    assert.deepEqual(first, { deleted: 1, batches: 1, done: false });
    const rest = await deleteEndedRequests(t.runtime.db, 90, RETENTION_BATCHES);
    assert.equal(rest.deleted, 1);
    assert.equal((await deleteEndedRequests(t.runtime.db, 90, RETENTION_BATCHES)).deleted, 0);

    const left = await t.runtime.db
      .selectFrom('payment_requests')
      .select('id')
      .where('id', 'in', [...old, recent.id, pending.id])
      .execute();
    assert.deepEqual(left.map((row) => row.id).sort(), [approved.id, recent.id, pending.id].sort());
    expectError(
      await t.request('GET', `${PAYMENT_REQUESTS}/${declined.id}`, { key: sk }),
      404,
      'PAYMENT_REQUEST_NOT_FOUND',
    );
    expectStatus(await t.request('GET', `${PAYMENT_REQUESTS}/${approved.id}`, { key: sk }), 200);
    const notices = await sql`SELECT 1 FROM operator_notices WHERE id = 'ntc_retention'`.execute(t.runtime.db);
    assert.equal(notices.rows.length, 0);
    // Every payment row stays: payments are money records.
    const paymentRows = await t.runtime.db
      .selectFrom('payments')
      .select('id')
      .where(
        'id',
        'in',
        payments.map((row) => row.payment_id),
      )
      .execute();
    assert.equal(paymentRows.length, 4);
    await ledgerIsSound(t);
  });

  test('sessions: dashboard and wallet sessions ended past the setting go, live and recent ones stay', async () => {
    const user = await createUser(t, business.id);
    const session = (name: string, lastSeenDaysAgo: number, revokedDaysAgo: number | null = null) => ({
      token_hash: `${name}-${randomBase62(16)}`,
      user_id: user.id,
      csrf_token: 'csrf',
      created_at: daysAgo(lastSeenDaysAgo + 1),
      last_seen_at: daysAgo(lastSeenDaysAgo),
      revoked_at: revokedDaysAgo === null ? null : daysAgo(revokedDaysAgo),
    });
    const dashboard = [
      session('idle-long-ago', 40),
      session('revoked-long-ago', 35, 31),
      // Signed out 5 days ago: its 30 days run from then.
      session('revoked-lately', 6, 5),
      session('idle-lately', 20),
      session('live', 0),
    ];
    await t.runtime.db.insertInto('dashboard_sessions').values(dashboard).execute();
    const run = await deleteEndedSessions(t.runtime.db, { days: 30, idleMinutes: 60 }, ONE_BATCH_OF_TWO);
    assert.equal(run.deleted, 2);
    assert.equal((await deleteEndedSessions(t.runtime.db, { days: 30, idleMinutes: 60 }, ONE_BATCH_OF_TWO)).deleted, 0);
    const dashboardLeft = await t.runtime.db
      .selectFrom('dashboard_sessions')
      .select('token_hash')
      .where(
        'token_hash',
        'in',
        dashboard.map((row) => row.token_hash),
      )
      .execute();
    assert.deepEqual(dashboardLeft.map((row) => row.token_hash.split('-').slice(0, -1).join('-')).sort(), [
      'idle-lately',
      'live',
      'revoked-lately',
    ]);

    const wallet = await newWallet(t, 0);
    const walletId = (
      await t.runtime.db
        .selectFrom('wallets')
        .select('id')
        .where('phone', '=', wallet.phone)
        .where('environment', '=', 'test')
        .executeTakeFirstOrThrow()
    ).id;
    const walletSession = (name: string, createdDaysAgo: number) => ({
      token_hash: `${name}-${randomBase62(16)}`,
      wallet_id: walletId,
      csrf_token: 'csrf',
      created_at: daysAgo(createdDaysAgo),
      last_seen_at: daysAgo(createdDaysAgo),
    });
    const wallets = [walletSession('old', 31), walletSession('older', 60), walletSession('recent', 29)];
    for (const row of wallets) {
      await sql`INSERT INTO wallet_sessions (token_hash, wallet_id, csrf_token, created_at, last_seen_at)
        VALUES (${row.token_hash}, ${row.wallet_id}, ${row.csrf_token}, ${row.created_at}, ${row.last_seen_at})`.execute(
        t.runtime.db,
      );
    }
    assert.equal((await deleteEndedWalletSessions(t.runtime.db, 30, RETENTION_BATCHES)).deleted, 2);
    assert.equal((await deleteEndedWalletSessions(t.runtime.db, 30, RETENTION_BATCHES)).deleted, 0);
    const walletLeft = await sql<{ token_hash: string }>`SELECT token_hash FROM wallet_sessions
      WHERE wallet_id = ${walletId}`.execute(t.runtime.db);
    assert.deepEqual(
      walletLeft.rows.map((row) => row.token_hash.split('-')[0]),
      ['recent'],
    );
  });

  test('the worker runs each cleanup as a leased task beside the tick, within the configured budget', async () => {
    const names = [
      'idempotency-cleanup',
      'webhook-rollup-cleanup',
      'pin-attempts-cleanup',
      'webhook-delivery-retention',
      'payment-request-retention',
      'dashboard-session-retention',
      'wallet-session-retention',
    ];
    for (const name of names) {
      const task = periodicTasks.find((each) => each.name === name);
      assert.ok(task, name);
      assert.equal(task.aside, true, name);
      const result = (await task.run(t.runtime)) as { done: boolean; deleted: number };
      assert.equal(result.done, true, name);
    }
  });
});
