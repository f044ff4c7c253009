import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { hiddenFields, signedIn } from './support.js';

const WEBHOOKS = '/dashboard/developers/webhooks';

describe('dashboard webhook endpoints: edit events, disable, enable, rotate, ping; delivery dates; the event log', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        WEBHOOK_ALLOW_PRIVATE: 'true',
      },
    });
    business = await t.createBusiness({ approveLive: false });
  });
  afterAll(() => t?.close());

  async function newEndpoint(owner: TestBusiness = business): Promise<string> {
    const created = await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
      key: owner.keys.secretTest,
      idempotencyKey: true,
      body: { url: 'http://127.0.0.1:9/hook', events: ['payment.created'] },
    });
    expectStatus(created, 201);
    return created.body.data.id as string;
  }

  const row = (id: string) =>
    t.runtime.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('an owner edits the events; a double submit changes once; a viewer and a forged form change nothing', async () => {
    const id = await newEndpoint();
    const { client } = await signedIn(t, business.id);
    const path = `${WEBHOOKS}/${id}`;
    const page = await client.get(path);
    assert.equal(page.status, 200);
    assert.match(page.html, /id="endpoint-events">payment\.created</);
    const form = { ...hiddenFields(page.html, path), events: ['payment.confirmed', 'payment.failed'] };
    const first = await client.post(path, form);
    assert.equal(first.status, 303);
    assert.equal(first.location, `${path}?notice=done`);
    const updated = await row(id);
    assert.deepEqual(updated.events, ['payment.confirmed', 'payment.failed']);
    const second = await client.post(path, form);
    assert.equal(second.location, `${path}?notice=already`);
    assert.equal((await row(id)).updated_at.getTime(), updated.updated_at.getTime(), 'the repeat wrote nothing');

    const none = await client.submit(path, path, {});
    assert.equal(none.location, `${path}?error=VALIDATION_ERROR`);
    const unknown = await client.submit(path, path, { events: 'nope.event' });
    assert.equal(unknown.location, `${path}?error=INVALID_WEBHOOK_EVENT`);

    const { _csrf: _token, ...withoutToken } = hiddenFields((await client.get(path)).html, path);
    const forged = await client.post(path, { ...withoutToken, events: 'payment.created' });
    assert.equal(forged.status, 403);
    for (const action of ['disable', 'rotate', 'ping']) {
      const { _csrf: _dropped, ...noToken } = hiddenFields((await client.get(path)).html, `${path}/${action}`);
      assert.equal((await client.post(`${path}/${action}`, noToken)).status, 403, action);
    }
    assert.equal((await row(id)).secret, updated.secret, 'no rotation without the token');

    const viewer = await signedIn(t, business.id, 'viewer');
    const seen = await viewer.client.get(path);
    assert.equal(seen.status, 403, 'the developers pages are for developers.manage (decision 083)');
    assert.ok(!seen.html.includes(`action="${path}/rotate"`), 'no actions for a viewer');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(seen.html)![1]!;
    for (const action of [path, `${path}/disable`, `${path}/rotate`, `${path}/ping`]) {
      const refused = await viewer.client.post(action, { _csrf: csrf, _idem: 'abcdefghijklmnop1234', events: 'ping' });
      assert.equal(refused.status, 403, action);
    }
    assert.deepEqual((await row(id)).events, ['payment.confirmed', 'payment.failed']);
    assert.equal((await row(id)).active, true);
  });

  test('disable then enable, each once under a double submit', async () => {
    const id = await newEndpoint();
    const { client } = await signedIn(t, business.id);
    const path = `${WEBHOOKS}/${id}`;
    const disable = hiddenFields((await client.get(path)).html, `${path}/disable`);
    const answers = await Promise.all([
      client.post(`${path}/disable`, disable),
      client.post(`${path}/disable`, disable),
    ]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [303, 303]);
    const disabled = await row(id);
    assert.equal(disabled.active, false);
    assert.equal(disabled.disabled_reason, 'MANUAL');
    const page = await client.get(path);
    assert.match(page.html, /id="endpoint-status">Disabled</);
    // A disabled endpoint gets no test ping (ENDPOINT_INACTIVE): no button offers one.
    assert.ok(!page.html.includes(`action="${path}/ping"`), 'no ping button on a disabled endpoint');
    const enabled = await client.submit(path, `${path}/enable`);
    assert.equal(enabled.location, `${path}?notice=done`);
    assert.equal((await row(id)).active, true);
    assert.equal((await row(id)).disabled_reason, null);
    assert.ok((await client.get(path)).html.includes(`action="${path}/ping"`), 'the ping button is back');
  });

  test('rotating shows the new secret once; the old one keeps signing for a day; a repeat shows no secret', async () => {
    const id = await newEndpoint();
    const before = await row(id);
    const { client } = await signedIn(t, business.id);
    const path = `${WEBHOOKS}/${id}`;
    const form = hiddenFields((await client.get(path)).html, `${path}/rotate`);
    const rotated = await client.post(`${path}/rotate`, form);
    assert.equal(rotated.status, 200);
    const secret = /id="endpoint-secret">([^<]+)</.exec(rotated.html)?.[1];
    const after = await row(id);
    assert.equal(secret, after.secret);
    assert.notEqual(after.secret, before.secret);
    assert.equal(after.previous_secret, before.secret);
    assert.ok(after.previous_secret_expires_at! > new Date(Date.now() + 23 * 3600_000));
    const repeat = await client.post(`${path}/rotate`, form);
    assert.equal(repeat.status, 303);
    assert.equal(repeat.location, `${path}?notice=already`);
    assert.equal((await row(id)).secret, after.secret, 'rotated once');
    const page = await client.get(path);
    assert.ok(!page.html.includes(after.secret), 'the endpoint page never shows the secret');
    assert.ok(!page.html.includes(before.secret));
  });

  test('a test ping makes one ping delivery and opens it; another business endpoint is not found', async () => {
    const id = await newEndpoint();
    const { client } = await signedIn(t, business.id);
    const path = `${WEBHOOKS}/${id}`;
    const form = hiddenFields((await client.get(path)).html, `${path}/ping`);
    const pinged = await client.post(`${path}/ping`, form);
    assert.equal(pinged.status, 303);
    assert.match(pinged.location ?? '', /^\/dashboard\/developers\/deliveries\/dlv_[A-Za-z0-9]+\?notice=done$/);
    await client.post(`${path}/ping`, form);
    const pings = await t.runtime.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', id)
      .where('event', '=', 'ping')
      .execute();
    assert.equal(pings.length, 1, 'a double submit pings once');
    const delivery = await client.get(pinged.location!);
    assert.equal(delivery.status, 200);
    assert.match(delivery.html, /ping/);

    const other = await t.createBusiness();
    const foreign = await newEndpoint(other);
    assert.equal((await client.get(`${WEBHOOKS}/${foreign}`)).status, 404);
    const fresh = hiddenFields((await client.get(path)).html, `${path}/disable`);
    const refused = await client.post(`${WEBHOOKS}/${foreign}/disable`, fresh);
    assert.equal(refused.location, `${WEBHOOKS}/${foreign}?error=ENDPOINT_NOT_FOUND`);
    assert.equal((await row(foreign)).active, true);
  });

  test('the delivery log filters by date; a bad date is a 400 page', async () => {
    const id = await newEndpoint();
    const { client } = await signedIn(t, business.id);
    await client.submit(`${WEBHOOKS}/${id}`, `${WEBHOOKS}/${id}/ping`);
    const today = new Date().toISOString().slice(0, 10);
    const LOG = '/dashboard/developers/deliveries';
    const within = await client.get(`${LOG}?endpoint=${id}&from=${today}&to=${today}`);
    assert.equal(within.status, 200);
    assert.match(within.html, />ping</);
    assert.match(within.html, new RegExp(`name="from" type="date" value="${today}"`));
    const earlier = await client.get(`${LOG}?endpoint=${id}&from=2020-01-01&to=2020-01-31`);
    assert.equal(earlier.status, 200);
    assert.doesNotMatch(earlier.html, />ping</);
    const empty = await client.get(`${LOG}?endpoint=${id}&from=&to=`);
    assert.match(empty.html, />ping</);
    const bad = await client.get(`${LOG}?from=2024-02-30`);
    assert.equal(bad.status, 400);
  });
  test('the event log pages newest first from a cursor, keeps its filter, and refuses a bad cursor', async () => {
    const shop = await t.createBusiness({ approveLive: false });
    for (let i = 0; i < 16; i++) {
      const created = await t.request('POST', '/api/v1/dev/intents', {
        key: shop.keys.secretTest,
        idempotencyKey: true,
        body: { amount: 100 + i },
      });
      expectStatus(created, 201);
      if (i < 12) {
        const cancelled = await t.request('POST', `/api/v1/dev/intents/${created.body.data.referenceNumber}/cancel`, {
          key: shop.keys.secretTest,
          idempotencyKey: true,
        });
        expectStatus(cancelled, 200);
      }
    }
    const stored = await t.runtime.db
      .selectFrom('events')
      .select(['id', 'event'])
      .where('business_id', '=', shop.id)
      .where('environment', '=', 'test')
      .orderBy('seq', 'desc')
      .execute();
    assert.equal(stored.length, 28);
    const { client } = await signedIn(t, shop.id);
    const ids = (html: string) => [...html.matchAll(/&quot;id&quot;:&quot;(evt_[A-Za-z0-9]+)&quot;/g)].map((m) => m[1]);
    const older = (html: string) => /<a rel="next" href="([^"]+)"/.exec(html)?.[1]?.replaceAll('&amp;', '&');

    const first = await client.get('/dashboard/developers/events');
    assert.equal(first.status, 200);
    assert.deepEqual(
      ids(first.html),
      stored.slice(0, 25).map((event) => event.id),
    );
    assert.doesNotMatch(first.html, /rel="first"/, 'the newest page has no link to itself');
    const next = older(first.html);
    assert.ok(next, 'a link to older events');
    const second = await client.get(`/dashboard/developers/events${next}`);
    assert.deepEqual(
      ids(second.html),
      stored.slice(25).map((event) => event.id),
    );
    assert.equal(older(second.html), undefined, 'the oldest page has no older link');
    assert.match(second.html, /rel="first"/);

    const cancelled = stored.filter((event) => event.event === 'payment.cancelled');
    const filtered = await client.get('/dashboard/developers/events?event=payment.cancelled');
    assert.deepEqual(
      ids(filtered.html),
      cancelled.map((event) => event.id),
    );
    assert.equal(older(filtered.html), undefined);

    for (const bad of ['before=0', 'before=abc', 'page=2']) {
      const refused = await client.get(`/dashboard/developers/events?${bad}`);
      assert.equal(refused.status, 400, bad);
    }
  });
});
