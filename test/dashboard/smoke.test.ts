import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/harness.js';
import { signedIn } from './support.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t?.close());

test('smoke', async () => {
  const business = await t.createBusiness();
  const { client } = await signedIn(t, business.id);
  for (const path of ['/dashboard', '/dashboard/payments', '/dashboard/payments/new', '/dashboard/developers/keys', '/dashboard/developers/webhooks', '/dashboard/developers/deliveries', '/dashboard/developers/events']) {
    const page = await client.get(path);
    console.log(path, page.status, page.status !== 200 ? page.html.slice(0, 2000) : '');
    assert.equal(page.status, 200);
  }
});
