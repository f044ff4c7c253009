import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';

const ASSETS = path.resolve('src/modules/dashboard/assets');
const sheet = (name: string) => readFileSync(path.join(ASSETS, name), 'utf8');

/**
 * The dashboard's styles in two sheets: dashboard.css, and phone.css for narrow screens (the
 * "More" menu, tables as lists of cards), loaded after it, both under the page's nonce.
 */
describe('the dashboard stylesheets: narrow screens in their own sheet, loaded after the main one', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  test('phone.css holds the narrow-screen rules; every page loads it after dashboard.css, under its nonce', async () => {
    assert.match(sheet('phone.css'), /nav\.main li\.more \{/);
    assert.match(sheet('phone.css'), /@media \(max-width: 40rem\)/);
    assert.doesNotMatch(sheet('dashboard.css'), /li\.more|@media \(max-width: (40|64)rem\)/);
    const page = await t.request('GET', '/dashboard/login');
    expectStatus(page, 200);
    const links = [...page.text.matchAll(/<link rel="stylesheet" href="([^"]+)" nonce="([^"]+)">/g)];
    assert.deepEqual(
      links.map((link) => /\/dashboard\/assets\/([a-z]+\.css)/.exec(link[1]!)?.[1]),
      ['base.css', 'dashboard.css', 'phone.css'],
    );
    const served = await t.request('GET', links[2]![1]!);
    expectStatus(served, 200);
    assert.match(served.headers.get('content-type') ?? '', /^text\/css/);
    assert.equal(served.text, sheet('phone.css'));
  });
});
