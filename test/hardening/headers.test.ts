import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { pay, RICH } from '../checkout/support.js';
import { createIntent } from '../intents/support.js';
import { manualClock } from '../support/clock.js';
import {
  expectError,
  expectStatus,
  sharedDatabase,
  startTestApp,
  type TestApp,
  type TestResponse,
} from '../support/harness.js';

function expectPageHeaders(response: TestResponse): string {
  const csp = response.headers.get('content-security-policy') ?? '';
  assert.ok(!csp.includes('unsafe-inline'), csp);
  const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
  assert.ok(nonce, csp);
  assert.match(csp, new RegExp(`style-src 'nonce-${nonce.replace(/[+/=]/g, '\\$&')}'`));
  assert.match(csp, /frame-ancestors 'none'/);
  // Scripts and stylesheets, inline or files: each carries the nonce (issue 38: the pages' are files).
  const tags = response.text.match(/<(?:script|style)\b[^>]*>|<link\b[^>]*rel="stylesheet"[^>]*>/g) ?? [];
  assert.ok(tags.length >= 1, response.text.slice(0, 300));
  for (const tag of tags) assert.ok(tag.includes(`nonce="${nonce}"`), `${tag} lacks the nonce`);
  assert.ok(!/\son[a-z]+=/i.test(response.text.replace(/<script[\s\S]*?<\/script>/g, '')), 'no inline handlers');
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
  assert.equal(response.headers.get('cache-control'), 'no-store');
  return nonce;
}

describe('security headers, page rate limit and one answer for unknown wallets (issue 15 item 9)', () => {
  let t: TestApp;
  let sk: string;
  let adminKeyBusiness: string;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    const business = await t.createBusiness();
    sk = business.keys.secretTest;
    adminKeyBusiness = business.id;
  });
  afterAll(() => t.close());

  test('/p/{shortCode} and /pay: a nonce CSP without unsafe-inline, nosniff, Referrer-Policy; a new nonce each time', async () => {
    const intent = await createIntent(t, sk, { amount: 5000 });
    const first = await t.request('GET', `/p/${intent.shortCode}`);
    expectStatus(first, 200);
    const second = await t.request('GET', `/p/${intent.shortCode}`);
    assert.notEqual(expectPageHeaders(first), expectPageHeaders(second));
    const missing = await t.request('GET', '/p/nope00');
    expectStatus(missing, 404);
    expectPageHeaders(missing);
    const code = await t.request('GET', '/pay?mode=test');
    expectStatus(code, 200);
    expectPageHeaders(code);
  });

  test('API answers carry Cache-Control: no-store, errors included', async () => {
    const answers = [
      await t.request('GET', '/api/v1/dev/balance', { key: sk }),
      await t.request('POST', '/api/v1/dev/webhooks/endpoints', {
        key: sk,
        idempotencyKey: true,
        body: { url: 'https://93.184.216.34/hook', events: ['payment.created'] },
      }),
      await t.admin('POST', '/keys', { businessId: adminKeyBusiness, kind: 'secret', environment: 'test' }),
      await t.request('GET', '/api/v1/dev/balance'),
      await t.request('GET', '/api/v1/dev/nothing-here', { key: sk }),
      await t.request('GET', `/checkout/intents/nope00`),
    ];
    for (const response of answers)
      assert.equal(response.headers.get('cache-control'), 'no-store', `${response.status} ${response.text}`);
    assert.equal(answers[1]!.status, 201, answers[1]!.text);
    assert.ok(answers[1]!.body.data.secret, 'the response that carries a webhook secret');
  });

  test('GET /p/{shortCode} is limited per address like /checkout/intents/{shortCode}', async () => {
    // An app on this database whose limiter clock stands still: the 130 requests fall in one
    // window however long they take (with the wall clock they could straddle a minute).
    const clocked = await startTestApp({ clock: manualClock(), testDatabase: sharedDatabase(t.testDatabase) });
    try {
      let limited: TestResponse | undefined;
      for (let i = 0; i < 130 && !limited; i++) {
        const response = await clocked.request('GET', `/p/nope${String(i).padStart(2, '0')}`);
        if (response.status === 429) limited = response;
        else expectStatus(response, 404);
      }
      assert.ok(limited, 'the page was rate limited');
      // A page answers with a page (issue 19): the reason in its language, with Retry-After.
      assert.match(limited.text, /data-state="RATE_LIMITED"/);
      expectPageHeaders(limited);
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      expectError(await clocked.request('GET', '/checkout/intents/nope00'), 429, 'RATE_LIMITED');
    } finally {
      await clocked.close();
    }
  });
});

describe('the pay routes answer an unknown wallet exactly like a wrong PIN (issue 15 item 9)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  test('same status, code and message', async () => {
    const sk = (await t.createBusiness()).keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 100 });
    const unknown = await pay(t, intent.shortCode, { phone: '+22299999998', pin: '1234' });
    const wrong = await pay(t, intent.shortCode, { phone: RICH.phone, pin: '9999' });
    expectError(unknown, 401, 'INVALID_PIN');
    expectError(wrong, 401, 'INVALID_PIN');
    assert.equal(unknown.body.error.message, wrong.body.error.message);
    expectStatus(await pay(t, intent.shortCode, RICH), 200);
  });
});
