import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { createUser, FormClient, hiddenFields, signedIn } from './support.js';

const LOG = '/dashboard/developers/deliveries';

describe('dashboard delivery log: last HTTP status, a red failing state, retry now on any failed delivery', () => {
  let t: TestApp;
  let business: TestBusiness;
  let owner: FormClient;
  let endpointId: string;

  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        WEBHOOK_ALLOW_PRIVATE: 'true',
      },
    });
    business = await t.createBusiness({ approveLive: false });
    const created = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
      key: business.keys.secretTest,
      idempotencyKey: true,
      body: { url: 'http://127.0.0.1:9/hook', events: ['payment.created'] },
    });
    expectStatus(created, 201);
    endpointId = created.body.data.id as string;
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t?.close());

  /** A ping delivery of the endpoint (no worker runs in tests), then put in the state given. */
  async function delivery(state: {
    status: 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'DEAD';
    attempt_count: number;
    last_status_code: number | null;
    last_error?: string | null;
    dead_reason?: 'MAX_ATTEMPTS' | 'ENDPOINT_DISABLED' | 'ENDPOINT_DELETED';
  }): Promise<string> {
    const path = `/dashboard/developers/webhooks/${endpointId}`;
    const pinged = await owner.submit(path, `${path}/ping`);
    assert.equal(pinged.status, 303, pinged.html.slice(0, 300));
    const id = /deliveries\/(dlv_[A-Za-z0-9]+)/.exec(pinged.location ?? '')![1]!;
    const final = state.status !== 'PENDING';
    await t.runtime.db
      .updateTable('webhook_deliveries')
      .set({
        status: state.status,
        attempt_count: state.attempt_count,
        last_status_code: state.last_status_code,
        last_error: state.last_error ?? null,
        dead_reason: state.status === 'DEAD' ? (state.dead_reason ?? 'MAX_ATTEMPTS') : null,
        next_attempt_at: new Date(Date.now() + 3_600_000),
        ...(final ? { completed_at: new Date() } : {}),
      })
      .where('id', '=', id)
      .execute();
    return id;
  }

  const row = (html: string, id: string) => {
    const at = html.indexOf(`deliveries/${id}"`);
    assert(at >= 0, `no row for ${id}`);
    return html.slice(html.lastIndexOf('<tr>', at), html.indexOf('</tr>', at));
  };

  test('the list shows each delivery’s last HTTP status and a red failing badge for a failed attempt', async () => {
    const failing = await delivery({ status: 'FAILED', attempt_count: 2, last_status_code: 500 });
    const dead = await delivery({ status: 'DEAD', attempt_count: 8, last_status_code: null, last_error: 'timeout' });
    const succeeded = await delivery({ status: 'SUCCEEDED', attempt_count: 1, last_status_code: 204 });
    const waiting = await delivery({ status: 'PENDING', attempt_count: 0, last_status_code: null });
    const list = await owner.get(`${LOG}?endpoint=${endpointId}`);
    assert.equal(list.status, 200);
    assert.match(row(list.html, failing), /<span class="badge FAILED" data-status="FAILED">Failing, retrying<\/span>/);
    assert.match(row(list.html, failing), /class="num last-status" data-label="Last HTTP status">500</);
    assert.match(row(list.html, failing), /Retry now/);
    assert.match(row(list.html, dead), /<span class="badge DEAD" data-status="DEAD">Given up<\/span>/);
    assert.match(row(list.html, dead), /data-reason="MAX_ATTEMPTS">\(8 attempts failed\)</);
    assert.match(row(list.html, dead), /class="num last-status" data-label="Last HTTP status">No response</);
    assert.match(row(list.html, dead), /Retry now/);
    assert.match(row(list.html, succeeded), /class="num last-status" data-label="Last HTTP status">204</);
    assert.doesNotMatch(row(list.html, succeeded), /Retry now|failing/);
    assert.match(row(list.html, waiting), /<span class="badge PENDING" data-status="PENDING">/);
    assert.doesNotMatch(row(list.html, waiting), /Retry now|data-reason/);
    const page = await owner.get(`${LOG}/${failing}`);
    assert.match(page.html, /id="delivery-status" data-status="FAILED">Failing, retrying</);
    assert.match(page.html, /id="last-status">500</);
    assert.doesNotMatch(page.html, /id="dead-reason"/);
    const endpointPage = await owner.get(`/dashboard/developers/webhooks/${endpointId}`);
    assert.match(row(endpointPage.html, failing), /Failing, retrying/);
  });

  test('a DEAD delivery shows why it stopped, in English, French and Arabic', async () => {
    const words = {
      en: ['8 attempts failed', 'endpoint disabled', 'endpoint deleted'],
      fr: ['8 tentatives en échec', 'point de terminaison désactivé', 'point de terminaison supprimé'],
      ar: ['فشلت 8 محاولات', 'العنوان معطَّل', 'العنوان محذوف'],
    } as const;
    const readers = { en: owner } as Record<'en' | 'fr' | 'ar', FormClient>;
    for (const lang of ['fr', 'ar'] as const) {
      const user = await createUser(t, business.id);
      readers[lang] = new FormClient(t);
      assert.equal((await readers[lang].signIn(user.email, user.password, { lang })).status, 303);
    }
    const reasons = ['MAX_ATTEMPTS', 'ENDPOINT_DISABLED', 'ENDPOINT_DELETED'] as const;
    for (const [i, reason] of reasons.entries()) {
      const dead = await delivery({ status: 'DEAD', attempt_count: 1, last_status_code: 500, dead_reason: reason });
      for (const lang of ['en', 'fr', 'ar'] as const) {
        const page = await readers[lang].get(`${LOG}/${dead}`);
        assert.equal(page.status, 200);
        assert.ok(
          page.html.includes(`id="dead-reason" data-reason="${reason}">${words[lang][i]}<`),
          `${reason} in ${lang}`,
        );
        const list = await readers[lang].get(`${LOG}?endpoint=${endpointId}&status=DEAD`);
        assert.ok(
          row(list.html, dead).includes(`data-reason="${reason}">(${words[lang][i]})<`),
          `${reason} listed in ${lang}`,
        );
      }
    }
  });

  test('retry now on a FAILED delivery sends it at once; on a DEAD one it starts a fresh schedule', async () => {
    const failing = await delivery({ status: 'FAILED', attempt_count: 3, last_status_code: 503 });
    const retried = await owner.submit(`${LOG}?endpoint=${endpointId}`, `${LOG}/${failing}/retry`);
    assert.equal(retried.location, `${LOG}/${failing}?notice=done`);
    const after = await t.runtime.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempt_count', 'next_attempt_at'])
      .where('id', '=', failing)
      .executeTakeFirstOrThrow();
    assert.equal(after.status, 'FAILED');
    assert.equal(after.attempt_count, 3, 'a waiting delivery keeps its count');
    assert.ok(after.next_attempt_at!.getTime() <= Date.now() + 1000, 'due now, not in an hour');

    const dead = await delivery({ status: 'DEAD', attempt_count: 8, last_status_code: 410 });
    const form = hiddenFields((await owner.get(`${LOG}/${dead}`)).html, `${LOG}/${dead}/retry`);
    const answers = await Promise.all([
      owner.post(`${LOG}/${dead}/retry`, form),
      owner.post(`${LOG}/${dead}/retry`, form),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [303, 303],
    );
    const revived = await t.runtime.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempt_count', 'dead_reason'])
      .where('id', '=', dead)
      .executeTakeFirstOrThrow();
    assert.deepEqual(revived, { status: 'PENDING', attempt_count: 0, dead_reason: null });
  });

  test('a viewer opens no delivery log (developers.manage, decision 083) and cannot post a retry', async () => {
    const failing = await delivery({ status: 'FAILED', attempt_count: 2, last_status_code: 500 });
    const { client: viewer } = await signedIn(t, business.id, 'viewer');
    const list = await viewer.get(`${LOG}?endpoint=${endpointId}`);
    assert.equal(list.status, 403);
    assert.doesNotMatch(list.html, /Retry now/);
    const form = hiddenFields((await owner.get(`${LOG}/${failing}`)).html, `${LOG}/${failing}/retry`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await viewer.get(LOG)).html)![1]!;
    const refused = await viewer.post(`${LOG}/${failing}/retry`, { ...form, _csrf: csrf });
    assert.equal(refused.status, 403);
  });
});
