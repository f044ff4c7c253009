import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { AUDIT_ACTIONS } from '../../src/modules/audit/actions.js';
import { recordAudit, SYSTEM_ACTOR } from '../../src/modules/audit/record.js';
import { ACTION_WORDS } from '../../src/modules/dashboard/pages/activity/words.js';
import { LANGS } from '../../src/lib/i18n.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient } from '../dashboard/support.js';
import { createSeller } from '../sellers/support.js';

const ACTIVITY = '/dashboard/activity';

/** The ids of the rows a page shows, in its order. */
const rowIds = (html: string) => [...html.matchAll(/<tr id="(aud_[^"]+)"/g)].map((match) => match[1]!);

describe('the dashboard Activity page (issue 53 item 4)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let owner: FormClient;
  let ownerUser: { id: string; email: string };

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness();
    ({ client: owner, user: ownerUser } = await signedIn(t, business.id));
    // 22 sellers made through the API (the key's entries) and one the owner renames (theirs).
    for (let i = 0; i < 22; i++) await createSeller(t, business.keys.secretTest, { name: `Stall ${i}` });
    const settings = '/dashboard/settings';
    assert.equal((await owner.submit(settings, `${settings}/business`, { name: 'Souk <Activity>' })).status, 303);
    expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { providerBps: 120 }), 200);
    await recordAudit(t.runtime.db, {
      businessId: business.id,
      environment: 'live',
      action: 'payout.created',
      actor: SYSTEM_ACTOR('daily payouts'),
      target: { kind: 'payout', id: 'PO-0000000000000001' },
    });
  });
  afterAll(() => t?.close());

  test('every act has its words in every language', () => {
    for (const action of AUDIT_ACTIONS) {
      for (const lang of LANGS) {
        const words = ACTION_WORDS[action]?.[lang];
        assert.ok(words && words.trim() !== '' && words !== action, `${action} in ${lang}`);
      }
    }
    assert.deepEqual(Object.keys(ACTION_WORDS).sort(), [...AUDIT_ACTIONS].sort());
  });

  test('newest first, 20 a page, the mode shown and the acts of no mode; who, from where, what, on what', async () => {
    const page = await owner.get(ACTIVITY);
    assert.equal(page.status, 200, page.html.slice(0, 300));
    const first = rowIds(page.html);
    assert.equal(first.length, 20);
    assert.match(page.html, /aria-current="page">Activity</);
    // The operator's fee change first, then the owner's rename, then the key's sellers.
    assert.match(page.html, new RegExp(`<tr id="${first[0]}" data-action="business.fees_changed">`));
    assert.match(page.html, /The platform operator/);
    assert.match(page.html, /Fees changed/);
    assert.match(
      page.html,
      new RegExp(`data-action="settings.updated">[\\s\\S]*?${ownerUser.email.replace(/[.+]/g, '\\$&')}`),
    );
    assert.match(page.html, /API key sk_test_/);
    assert.match(page.html, /Seller created/);
    assert.match(page.html, /<a href="\/dashboard\/sellers\/SL-[^"]+"><bdi>SL-/);
    assert.match(page.html, /<a href="\/dashboard\/settings"><bdi>biz_/);
    assert.match(page.html, /127\.0\.0\.1/);
    // The live mode's entry is not this mode's.
    assert.doesNotMatch(page.html, /PO-0000000000000001/);
    const second = await owner.get(`${ACTIVITY}?page=2`);
    const rest = rowIds(second.html);
    // 22 sellers, the rename, the fee change, and the owner's joining (by the operator) and sign-in.
    assert.equal(rest.length, 6);
    assert.equal(new Set([...first, ...rest]).size, 26);
  });

  test('filters by act and by member; French and Arabic words', async () => {
    const sellers = await owner.get(`${ACTIVITY}?action=seller.created`);
    assert.equal(rowIds(sellers.html).length, 20);
    assert.doesNotMatch(sellers.html, /data-action="settings.updated"/);
    assert.match(sellers.html, /<option value="seller.created" selected>/);
    const mine = await owner.get(`${ACTIVITY}?actor=${ownerUser.id}`);
    assert.deepEqual(
      [...mine.html.matchAll(/data-action="([^"]+)"/g)].map((m) => m[1]),
      ['settings.updated', 'user.signed_in'],
    );
    const operator = await owner.get(`${ACTIVITY}?actor=operator`);
    assert.deepEqual(
      [...operator.html.matchAll(/data-action="([^"]+)"/g)].map((m) => m[1]),
      ['business.fees_changed', 'user.joined'],
    );
    const none = await owner.get(`${ACTIVITY}?action=payout.cancelled`);
    assert.match(none.html, /No entry matches these filters/);
    assert.equal((await owner.get(`${ACTIVITY}?action=payment.teleported`)).status, 400);

    assert.equal((await owner.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' })).status, 303);
    const fr = await owner.get(`${ACTIVITY}?action=seller.created`);
    assert.match(fr.html, /Vendeur créé/);
    assert.match(fr.html, /Activité/);
    assert.equal((await owner.submit('/dashboard', '/dashboard/preferences', { lang: 'ar' })).status, 303);
    const ar = await owner.get(ACTIVITY);
    assert.match(ar.html, /إنشاء بائع/);
    assert.match(ar.html, /مشغل المنصة/);
    assert.match(ar.html, /dir="rtl"/);
    assert.equal((await owner.submit('/dashboard', '/dashboard/preferences', { lang: 'en' })).status, 303);
  });

  test('a viewer neither sees the link nor the page', async () => {
    const { client: viewer } = await signedIn(t, business.id, 'viewer');
    const home = await viewer.get('/dashboard');
    assert.equal(home.status, 200);
    assert.doesNotMatch(home.html, /href="\/dashboard\/activity"/);
    const refused = await viewer.get(ACTIVITY);
    assert.equal(refused.status, 403);
    assert.doesNotMatch(refused.html, /aud_/);
    assert.match((await owner.get('/dashboard')).html, /href="\/dashboard\/activity"/);
  });
});
