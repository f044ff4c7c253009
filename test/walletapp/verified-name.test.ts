import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { payerName } from '../../src/modules/businesses/payer-name.js';
import { renameBusiness } from '../../src/modules/businesses/service.js';
import { adminCli } from '../support/admin-cli.js';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { newWallet } from '../links/support.js';
import { Browser, requestPayment } from './support.js';

/**
 * Issue 51: the wallet app shows "the merchant's name as the platform verified it (not a free
 * text)". The operator verifies it at live approval; a merchant's rename does not change what
 * payers see; the sandbox verifies nobody and says so.
 */
describe('the verified merchant name (issue 51)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', RATE_LIMIT_LIVE_PER_MINUTE: '100000' } });
  });
  afterAll(() => t.close());

  async function unapprovedBusiness(name: string): Promise<string> {
    const created = await t.admin('POST', '/businesses', { name, approveLive: false, liveKeys: false });
    expectStatus(created, 201);
    assert.equal(created.body.data.business.verifiedName, null);
    return created.body.data.business.id;
  }

  test('approve-live verifies the current name by default; a given verifiedName is kept until the operator changes it', async () => {
    const id = await unapprovedBusiness('Épicerie Ksar');
    const approved = await t.admin('POST', `/businesses/${id}/approve-live`);
    expectStatus(approved, 200);
    assert.equal(approved.body.data.verifiedName, 'Épicerie Ksar');
    // The merchant renames itself: payers still see the verified name.
    await renameBusiness(t.runtime.db, id, 'Best Deals Bank Official');
    const shown = await t.admin('GET', `/businesses/${id}`);
    assert.deepEqual(
      [shown.body.data.name, shown.body.data.verifiedName],
      ['Best Deals Bank Official', 'Épicerie Ksar'],
    );
    assert.deepEqual(await payerName(t.runtime.db, id, 'live'), { name: 'Épicerie Ksar', verified: true });
    // The sandbox verifies nobody: the business's own name, not verified.
    assert.deepEqual(await payerName(t.runtime.db, id, 'test'), { name: 'Best Deals Bank Official', verified: false });
    // Approving again keeps it; the operator changes it by approving with a new one.
    const again = await t.admin('POST', `/businesses/${id}/approve-live`, {});
    assert.equal(again.body.data.verifiedName, 'Épicerie Ksar');
    assert.deepEqual(again.body.data.keys, []);
    const changed = await t.admin('POST', `/businesses/${id}/approve-live`, {
      verifiedName: '  Épicerie du Ksar SARL ',
    });
    expectStatus(changed, 200);
    assert.equal(changed.body.data.verifiedName, 'Épicerie du Ksar SARL');
    const listed = await t.admin('GET', '/businesses?limit=100');
    const item = listed.body.data.items.find((business: { id: string }) => business.id === id);
    assert.equal(item.verifiedName, 'Épicerie du Ksar SARL');
  });

  test('a verifiedName that is empty, blank, too long or sent without live approval is refused', async () => {
    const id = await unapprovedBusiness('Quincaillerie');
    expectError(await t.admin('POST', `/businesses/${id}/approve-live`, { verifiedName: '' }), 400, 'VALIDATION_ERROR');
    const blank = await t.admin('POST', `/businesses/${id}/approve-live`, { verifiedName: '   ' });
    expectError(blank, 400, 'VALIDATION_ERROR');
    assert.equal(blank.body.error.details[0].field, 'verifiedName');
    const long = await t.admin('POST', `/businesses/${id}/approve-live`, { verifiedName: 'x'.repeat(201) });
    expectError(long, 400, 'VALIDATION_ERROR');
    expectError(
      await t.admin('POST', `/businesses/${id}/approve-live`, { verifiedName: 'A', other: 1 }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await t.admin('POST', '/businesses', { name: 'Sans', verifiedName: 'Sans SARL' }),
      400,
      'VALIDATION_ERROR',
    );
    // Nothing was approved by the refusals.
    assert.equal((await t.admin('GET', `/businesses/${id}`)).body.data.liveApproved, false);
    const created = await t.admin('POST', '/businesses', {
      name: 'Avec',
      approveLive: true,
      verifiedName: 'Avec SARL',
    });
    expectStatus(created, 201);
    assert.equal(created.body.data.business.verifiedName, 'Avec SARL');
  });

  test('the admin CLI: approve-live --verified-name, and show prints it', async () => {
    const id = await unapprovedBusiness('Boulangerie');
    const approved = await adminCli(
      t,
      'business',
      'approve-live',
      id,
      '--verified-name',
      'Boulangerie Moderne',
      '--json',
    );
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(JSON.parse(approved.stdout).verifiedName, 'Boulangerie Moderne');
    const shown = await adminCli(t, 'business', 'show', id);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /VERIFIED\s+Boulangerie Moderne/);
  });

  test('the wallet app: a live request shows the verified name, whatever the merchant renamed itself to', async () => {
    const business = await t.createBusiness({ name: 'Pharmacie Centrale' });
    await renameBusiness(t.runtime.db, business.id, 'Renamed By Merchant');
    const wallet = await newWallet(t, 50_000, 'live');
    const request = await requestPayment(t, business.keys.secretLive, { phone: wallet.phone });
    const browser = new Browser(t);
    const signedIn = await browser.signIn(wallet.phone.slice(4), wallet.pin, 'live');
    assert.equal(signedIn.status, 303, signedIn.html);
    const home = await browser.get('/wallet');
    assert.match(home.html, new RegExp(`id="request-${request.id}"`));
    assert.match(home.html, /Pharmacie Centrale/);
    assert.doesNotMatch(home.html, /Renamed By Merchant/);
    assert.doesNotMatch(home.html, /class="unverified"/);
    // Muted, the mute list names it the same way.
    const muted = await browser.post(`/wallet/merchants/${business.id}/mute`, Browser.fields(home.html));
    assert.equal(muted.status, 200, muted.html);
    assert.match(muted.html, /Pharmacie Centrale/);
    assert.doesNotMatch(muted.html, /Renamed By Merchant/);
  });

  test('the wallet app: a sandbox request shows the business name marked not verified, in en, fr and ar', async () => {
    const business = await t.createBusiness({ name: 'Boutique Sandbox' });
    const wallet = await newWallet(t, 50_000);
    const request = await requestPayment(t, business.keys.secretTest, { phone: wallet.phone });
    const browser = new Browser(t);
    await browser.signIn(wallet.phone.slice(4), wallet.pin);
    const marks = { en: 'Sandbox · not verified', fr: 'Sandbox · non vérifié', ar: 'بيئة الاختبار · غير موثَّق' };
    for (const [lang, mark] of Object.entries(marks)) {
      const home = await browser.get(`/wallet?lang=${lang}`);
      const card = home.html.slice(home.html.indexOf(`id="request-${request.id}"`));
      assert.match(card, /Boutique Sandbox/);
      assert.ok(card.includes(`<p class="unverified" role="note">${mark}</p>`), `${lang}: ${card.slice(0, 600)}`);
    }
  });
});
