import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import {
  expectError,
  expectStatus,
  sharedDatabase,
  startTestApp,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';

const ENDPOINTS = '/api/v1/dev/webhooks/endpoints';
const PUBLIC_URL = 'https://93.184.216.34/hooks/commerce';

describe('webhook endpoints (api.md 2.4, 4.3; decisions "Events and deliveries")', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());

  const create = (body: unknown, key = sk) => t.request('POST', ENDPOINTS, { key, body, idempotencyKey: true });
  const clear = async (businessId = business.id) => {
    await t.runtime.db
      .updateTable('webhook_endpoints')
      .set({ deleted_at: new Date() })
      .where('business_id', '=', businessId)
      .execute();
  };

  test('create answers 201 with the secret (64 hex) once; reads never show it', async () => {
    const response = await create({ url: PUBLIC_URL, events: ['payment.confirmed', 'payment.refunded'] });
    expectStatus(response, 201);
    const endpoint = response.body.data;
    assert.match(endpoint.id, /^we_/);
    assert.equal(endpoint.url, PUBLIC_URL);
    assert.deepEqual(endpoint.events, ['payment.confirmed', 'payment.refunded']);
    assert.equal(endpoint.active, true);
    assert.equal(endpoint.sandbox, true);
    assert.match(endpoint.secret, /^[0-9a-f]{64}$/);
    const fetched = await t.request('GET', `${ENDPOINTS}/${endpoint.id}`, { key: sk });
    expectStatus(fetched, 200);
    assert.equal(fetched.body.data.secret, undefined);
    for (const path of ['/api/v1/dev/webhooks', ENDPOINTS]) {
      const list = await t.request('GET', path, { key: sk });
      expectStatus(list, 200);
      assert.deepEqual(Object.keys(list.body.data).sort(), ['hasMore', 'items', 'limit', 'page', 'total']);
      assert.equal(list.body.data.total, 1);
      assert.equal(list.body.data.items[0].id, endpoint.id);
      assert.equal(list.body.data.items[0].secret, undefined);
    }
    await clear();
  });

  test('update changes url, events and active; delete hides the endpoint', async () => {
    const { id } = (await create({ url: PUBLIC_URL, events: ['payment.created'] })).body.data;
    const patched = await t.request('PATCH', `${ENDPOINTS}/${id}`, {
      key: sk,
      idempotencyKey: true,
      body: { url: 'https://93.184.216.35/other', events: ['payment.failed'], active: false },
    });
    expectStatus(patched, 200);
    assert.equal(patched.body.data.url, 'https://93.184.216.35/other');
    assert.deepEqual(patched.body.data.events, ['payment.failed']);
    assert.equal(patched.body.data.active, false);
    expectError(
      await t.request('PATCH', `${ENDPOINTS}/${id}`, { key: sk, idempotencyKey: true, body: {} }),
      400,
      'VALIDATION_ERROR',
    );
    const deleted = await t.request('DELETE', `${ENDPOINTS}/${id}`, { key: sk, idempotencyKey: true });
    expectStatus(deleted, 200);
    assert.deepEqual(deleted.body.data, { deleted: true });
    expectError(await t.request('GET', `${ENDPOINTS}/${id}`, { key: sk }), 404, 'ENDPOINT_NOT_FOUND');
    expectError(
      await t.request('DELETE', `${ENDPOINTS}/${id}`, { key: sk, idempotencyKey: true }),
      404,
      'ENDPOINT_NOT_FOUND',
    );
  });

  test('rotate-secret returns a new secret and keeps the old one signing for 24 h', async () => {
    const created = (await create({ url: PUBLIC_URL, events: ['payment.created'] })).body.data;
    const rotated = await t.request('POST', `${ENDPOINTS}/${created.id}/rotate-secret`, {
      key: sk,
      idempotencyKey: true,
    });
    expectStatus(rotated, 200);
    assert.match(rotated.body.data.secret, /^[0-9a-f]{64}$/);
    assert.notEqual(rotated.body.data.secret, created.secret);
    const overlapMs = Date.parse(rotated.body.data.previousSecretExpiresAt) - Date.now();
    assert.ok(overlapMs > 23.9 * 3600_000 && overlapMs <= 24 * 3600_000, String(overlapMs));
    await clear();
  });

  test('MAX_ENDPOINTS_REACHED at the sixth endpoint of the business, sandbox and live together (issue 15 item 11)', async () => {
    for (let i = 0; i < 3; i++)
      expectStatus(await create({ url: `${PUBLIC_URL}/${i}`, events: ['payment.created'] }), 201);
    const live = [];
    for (let i = 0; i < 2; i++) {
      const response = await create(
        { url: `${PUBLIC_URL}/live${i}`, events: ['payment.created'] },
        business.keys.secretLive,
      );
      expectStatus(response, 201);
      live.push(response.body.data.id);
    }
    expectError(await create({ url: PUBLIC_URL, events: ['payment.created'] }), 400, 'MAX_ENDPOINTS_REACHED');
    expectError(
      await create({ url: PUBLIC_URL, events: ['payment.created'] }, business.keys.secretLive),
      400,
      'MAX_ENDPOINTS_REACHED',
    );
    // A deleted endpoint frees its place, whichever environment it was in.
    expectStatus(
      await t.request('DELETE', `${ENDPOINTS}/${live[0]}`, { key: business.keys.secretLive, idempotencyKey: true }),
      200,
    );
    expectStatus(await create({ url: PUBLIC_URL, events: ['payment.created'] }), 201);
    await clear();
  });

  test('concurrent creates never make more than five', async () => {
    const racer = await t.createBusiness({ name: 'Racer' });
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        create({ url: `${PUBLIC_URL}/${i}`, events: ['payment.created'] }, racer.keys.secretTest),
      ),
    );
    assert.equal(responses.filter((r) => r.status === 201).length, 5);
    for (const response of responses.filter((r) => r.status !== 201))
      expectError(response, 400, 'MAX_ENDPOINTS_REACHED');
  });

  test('INVALID_WEBHOOK_URL: not https, malformed, or resolving to a non-public address', async () => {
    for (const url of [
      'http://93.184.216.34/hook',
      'not a url',
      'ftp://93.184.216.34/hook',
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://10.1.2.3/hook',
      'https://172.16.0.1/hook',
      'https://192.168.1.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://[::1]/hook',
      'https://[fd00:ec2::254]/hook',
      'https://[fe80::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://no-such-host.invalid/hook',
    ]) {
      const response = await create({ url, events: ['payment.created'] });
      expectError(response, 400, 'INVALID_WEBHOOK_URL');
    }
    const { id } = (await create({ url: PUBLIC_URL, events: ['payment.created'] })).body.data;
    expectError(
      await t.request('PATCH', `${ENDPOINTS}/${id}`, {
        key: sk,
        idempotencyKey: true,
        body: { url: 'https://10.0.0.1/' },
      }),
      400,
      'INVALID_WEBHOOK_URL',
    );
    await clear();
  });

  test('WEBHOOK_ALLOW_PRIVATE lets sandbox endpoints use http and loopback, never live ones', async () => {
    const dev = await startTestApp({
      config: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      testDatabase: sharedDatabase(t.testDatabase),
    });
    try {
      const owner = await dev.createBusiness();
      const sandbox = await dev.request('POST', ENDPOINTS, {
        key: owner.keys.secretTest,
        idempotencyKey: true,
        body: { url: 'http://127.0.0.1:9/hook', events: ['payment.created'] },
      });
      expectStatus(sandbox, 201);
      for (const url of ['http://127.0.0.1:9/hook', 'https://127.0.0.1:9/hook', 'http://93.184.216.34/hook']) {
        const live = await dev.request('POST', ENDPOINTS, {
          key: owner.keys.secretLive,
          idempotencyKey: true,
          body: { url, events: ['payment.created'] },
        });
        expectError(live, 400, 'INVALID_WEBHOOK_URL');
      }
    } finally {
      await dev.close();
    }
  });

  test('INVALID_WEBHOOK_EVENT for unknown names; VALIDATION_ERROR for an empty or repeated list', async () => {
    expectError(
      await create({ url: PUBLIC_URL, events: ['payment.created', 'payment.exploded'] }),
      400,
      'INVALID_WEBHOOK_EVENT',
    );
    expectError(await create({ url: PUBLIC_URL, events: ['ping'] }), 400, 'INVALID_WEBHOOK_EVENT');
    expectError(await create({ url: PUBLIC_URL, events: [] }), 400, 'VALIDATION_ERROR');
    expectError(
      await create({ url: PUBLIC_URL, events: ['payment.created', 'payment.created'] }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await create({ url: PUBLIC_URL }), 400, 'VALIDATION_ERROR');
    expectError(await create({ url: PUBLIC_URL, events: ['payment.created'], secret: 'x' }), 400, 'VALIDATION_ERROR');
  });

  test('EVENTS_NOT_PERMITTED when the key lacks the scope the events need', async () => {
    const issue = async (scopes: string[]) => {
      const response = await t.admin('POST', '/keys', {
        businessId: business.id,
        kind: 'secret',
        environment: 'test',
        scopes,
      });
      expectStatus(response, 201);
      return response.body.data.key as string;
    };
    const webhooksOnly = await issue(['webhooks:write', 'webhooks:read']);
    for (const events of [['order.new'], ['product.stock_low'], ['payment.created']]) {
      expectError(await create({ url: PUBLIC_URL, events }, webhooksOnly), 403, 'EVENTS_NOT_PERMITTED');
    }
    const withOrders = await issue(['webhooks:write', 'store.orders:read']);
    expectStatus(await create({ url: PUBLIC_URL, events: ['order.new', 'order.cancelled'] }, withOrders), 201);
    expectError(
      await create({ url: PUBLIC_URL, events: ['order.new', 'payment.created'] }, withOrders),
      403,
      'EVENTS_NOT_PERMITTED',
    );
    const noWrite = await issue(['webhooks:read', 'intents:read']);
    expectError(await create({ url: PUBLIC_URL, events: ['payment.created'] }, noWrite), 403, 'SCOPE_REQUIRED');
    await clear();
  });

  test("ENDPOINT_NOT_FOUND for unknown ids and another business's endpoints; SANDBOX_MISMATCH for the other environment's", async () => {
    const { id } = (await create({ url: PUBLIC_URL, events: ['payment.created'] })).body.data;
    const other = await t.createBusiness({ name: 'Other' });
    // The other environment's endpoint is SANDBOX_MISMATCH (issue 15 item 10).
    for (const [key, endpointId, status, code] of [
      [other.keys.secretTest, id, 404, 'ENDPOINT_NOT_FOUND'],
      [business.keys.secretLive, id, 403, 'SANDBOX_MISMATCH'],
      [sk, 'we_unknown', 404, 'ENDPOINT_NOT_FOUND'],
    ] as const) {
      expectError(await t.request('GET', `${ENDPOINTS}/${endpointId}`, { key }), status, code);
      for (const [method, suffix, body] of [
        ['PATCH', '', { active: false }],
        ['DELETE', '', undefined],
        ['POST', '/rotate-secret', undefined],
        ['POST', '/test', undefined],
      ] as const) {
        const response = await t.request(method, `${ENDPOINTS}/${endpointId}${suffix}`, {
          key,
          idempotencyKey: true,
          ...(body ? { body } : {}),
        });
        expectError(response, status, code);
      }
    }
    const still = await t.request('GET', `${ENDPOINTS}/${id}`, { key: sk });
    assert.equal(still.body.data.active, true);
    await clear();
  });

  test('endpoints need a secret key: publishable keys get SECRET_KEY_REQUIRED', async () => {
    expectError(await t.request('GET', ENDPOINTS, { key: business.keys.publishableTest }), 403, 'SECRET_KEY_REQUIRED');
    expectError(
      await create({ url: PUBLIC_URL, events: ['payment.created'] }, business.keys.publishableTest),
      403,
      'SECRET_KEY_REQUIRED',
    );
  });
});
