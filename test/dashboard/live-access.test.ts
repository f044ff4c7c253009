import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { requestLiveAccess } from '../../src/modules/businesses/service.js';
import { adminCli } from '../support/admin-cli.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { hiddenFields, signedIn } from './support.js';

const SETTINGS = '/dashboard/settings';

describe('request live access: a visible step in settings, its state, the operator approves in the admin CLI', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
  });
  afterAll(() => t?.close());

  test('an unapproved business is told how to get live; its owner asks once; the operator sees it and approves', async () => {
    const business = await t.createBusiness({ name: `Boutique ${Date.now()}`, approveLive: false });
    const { client } = await signedIn(t, business.id);
    const home = await client.get('/dashboard');
    // The header's live control says in words where to go, instead of a disabled button.
    assert.match(
      home.html,
      /<a class="why" href="\/dashboard\/settings#live-access" id="live-how"><span id="live-not-approved">Live mode opens once the business is approved\.<\/span><\/a>/,
    );
    assert.doesNotMatch(home.html, /value="live" disabled/);

    const before = await client.get(SETTINGS);
    assert.match(before.html, /id="request-live">Request live access</);
    const { client: viewer } = await signedIn(t, business.id, 'viewer');
    assert.doesNotMatch((await viewer.get(SETTINGS)).html, /id="request-live"/, 'owners ask');

    const form = hiddenFields(before.html, `${SETTINGS}/live-access`);
    const answers = await Promise.all([
      client.post(`${SETTINGS}/live-access`, form),
      client.post(`${SETTINGS}/live-access`, form),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [303, 303],
    );
    // The notice is a query parameter the page reads, before the fragment that scrolls to the step.
    assert.deepEqual(answers.map((a) => a.location).sort(), [
      `${SETTINGS}?notice=already#live-access`,
      `${SETTINGS}?notice=done#live-access`,
    ]);
    const landed = await client.get(answers.find((a) => a.location!.includes('done'))!.location!.split('#')[0]!);
    assert.match(landed.html, /<p class="notice" role="status">Done\.<\/p>/);
    const row = await t.runtime.db
      .selectFrom('businesses')
      .select(['live_requested_at', 'live_approved'])
      .where('id', '=', business.id)
      .executeTakeFirstOrThrow();
    assert.ok(row.live_requested_at instanceof Date);
    assert.equal(row.live_approved, false);
    const after = await client.get(SETTINGS);
    assert.match(
      after.html,
      /id="live-state"><span class="badge PENDING">Requested on [^<]+: waiting for approval by the platform\.</,
    );
    assert.doesNotMatch(after.html, /id="request-live"/);
    // Asking again keeps the first ask's time.
    const again = await requestLiveAccess(t.runtime.db, business.id);
    assert.equal(again.liveRequestedAt, row.live_requested_at!.toISOString());

    const list = await adminCli(t, 'business', 'list', '--limit', '100');
    assert.equal(list.code, 0, list.stderr);
    const line = list.stdout.split('\n').find((text) => text.startsWith(business.id));
    assert.match(line ?? '', / requested \d{4}-\d\d-\d\d \d\d:\d\d UTC /);
    const show = await adminCli(t, 'business', 'show', business.id);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^LIVE +requested \d{4}-\d\d-\d\d \d\d:\d\d UTC$/m);
    assert.match(show.stdout, new RegExp(`Waiting for approval: \`business approve-live ${business.id}\``));
    const json = await adminCli(t, 'business', 'show', business.id, '--json');
    assert.equal(JSON.parse(json.stdout).liveRequestedAt, row.live_requested_at!.toISOString());

    const approved = await adminCli(t, 'business', 'approve-live', business.id);
    assert.equal(approved.code, 0, approved.stderr);
    const shown = await adminCli(t, 'business', 'show', business.id);
    assert.match(shown.stdout, /^LIVE +approved$/m);
    assert.doesNotMatch(shown.stdout, /Waiting for approval/);
    const settled = await client.get(SETTINGS);
    assert.match(settled.html, /id="live-state"><span class="badge live">Approved: live mode is open\.</);
    expectStatus(await t.admin('GET', '/businesses/biz_nope'), 404);
  });

  test('in French the step and its state are French', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const { client } = await signedIn(t, business.id);
    await client.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' });
    const page = await client.get(SETTINGS);
    assert.match(
      page.html,
      /id="live-not-approved">Le mode réel s(?:'|&#39;)ouvre une fois l(?:'|&#39;)entreprise approuvée\./,
    );
    assert.match(page.html, /Demander l(&#39;|')accès au mode réel/);
  });
});
