import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { hiddenFields, signedIn } from './support.js';

const SETTINGS = '/dashboard/settings';

describe('dashboard settings: business name, fee plan (the team is on its own page: test/team)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000',
      },
    });
  });
  afterAll(() => t?.close());

  test('an owner renames the business; an empty name is refused; the fee plan is shown read only', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const fees = await t.admin('PUT', `/businesses/${business.id}/fees`, { providerBps: 250, payerFee: 500 });
    assert.equal(fees.status, 200, fees.text);
    const { client } = await signedIn(t, business.id);
    const page = await client.get(SETTINGS);
    assert.equal(page.status, 200);
    const renamed = await client.submit(SETTINGS, `${SETTINGS}/business`, { name: '  Boutique Nouakchott  ' });
    assert.equal(renamed.location, `${SETTINGS}?notice=done`);
    const row = await t.runtime.db
      .selectFrom('businesses')
      .select('name')
      .where('id', '=', business.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.name, 'Boutique Nouakchott');
    const after = await client.get(SETTINGS);
    assert.match(after.html, /class="brand"><bdi>Boutique Nouakchott<\/bdi></);
    const form = { ...hiddenFields((await client.get(SETTINGS)).html, `${SETTINGS}/business`), name: 'Once' };
    assert.equal((await client.post(`${SETTINGS}/business`, form)).location, `${SETTINGS}?notice=done`);
    await t.runtime.db.updateTable('businesses').set({ name: 'Changed since' }).where('id', '=', business.id).execute();
    assert.equal((await client.post(`${SETTINGS}/business`, form)).location, `${SETTINGS}?notice=already`);
    const kept = await t.runtime.db
      .selectFrom('businesses')
      .select('name')
      .where('id', '=', business.id)
      .executeTakeFirstOrThrow();
    assert.equal(kept.name, 'Changed since', 'the repeat wrote nothing');
    const empty = await client.submit(SETTINGS, `${SETTINGS}/business`, { name: '   ' });
    assert.equal(empty.location, `${SETTINGS}?error=VALIDATION_ERROR`);
    // The plan the operator set: 2.50 % provider fee, 5.00 MRU paid by the payer.
    const plan = /<dl id="fee-plan">([\s\S]*?)<\/dl>/.exec(after.html)?.[1] ?? '';
    assert.match(plan, /<dd>2\.50%<\/dd>/);
    assert.match(plan, /<dd>5[.,]00\b[^<]*MRU|MRU[^<]*5[.,]00/);
    assert.doesNotMatch(after.html, /action="\/dashboard\/settings\/fee/, 'no form changes the fee plan');
  });

  test('a viewer and a forged form change nothing', async () => {
    const business = await t.createBusiness({ approveLive: false });
    const owner = await signedIn(t, business.id);
    const viewer = await signedIn(t, business.id, 'viewer');
    const page = await viewer.client.get(SETTINGS);
    assert.equal(page.status, 200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
    for (const [action, form] of [
      [`${SETTINGS}/business`, { name: 'Hijacked' }],
      [`${SETTINGS}/contact`, { phone: '', email: '', pickupAddress: '' }],
      [`${SETTINGS}/live-access`, {}],
    ] as const) {
      const answer = await viewer.client.post(action, { _csrf: csrf, _idem: 'abcdefghijklmnop1234', ...form });
      assert.equal(answer.status, 403, action);
    }
    const { _csrf: _token, ...noCsrf } = hiddenFields((await owner.client.get(SETTINGS)).html, `${SETTINGS}/business`);
    const forged = await owner.client.post(`${SETTINGS}/business`, { ...noCsrf, name: 'Forged' });
    assert.equal(forged.status, 403);
    const row = await t.runtime.db
      .selectFrom('businesses')
      .select('name')
      .where('id', '=', business.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.name, 'Test business');
    assert.ok(!page.html.includes('/dashboard/team'), "the team is not in a viewer's menu");
  });
});
