import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { endDueRequests } from '../../src/modules/requests/expiry.js';
import { setMuted } from '../../src/modules/requests/service.js';
import { createIntent } from '../intents/support.js';
import { newPhone } from '../payouts/support.js';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { hiddenFields, signedIn, type FormClient } from './support.js';

const PAYMENTS = '/dashboard/payments';
const APPROVING_PHONE = '+22220000021';

/** The requests an intent's page lists: id, status and the status's words, newest first. */
function listed(html: string): { id: string; status: string; words: string }[] {
  return [...html.matchAll(/<tr data-request="(PR-\d+)">.*?data-status="([A-Z]+)">([^<]+)<\/span>/g)].map((match) => ({
    id: match[1]!,
    status: match[2]!,
    words: match[3]!,
  }));
}

/** The text of a field's refusal on a redrawn form, if it has one. */
function fieldError(html: string, field: string): string | undefined {
  return new RegExp(`<p class="error field-error" id="error-${field}">([^<]+)</p>`).exec(html)?.[1];
}

/** Issue 51 item 5: an owner asks a payer's wallet to pay from the payment's page. */
describe("a payment's page: request payment", () => {
  let t: TestApp;
  let business: TestBusiness;
  let owner: FormClient;
  const pathOf = (reference: string) => `${PAYMENTS}/${reference}`;
  const ask = (client: FormClient, reference: string, fields: Record<string, string>) =>
    client.submit(pathOf(reference), `${pathOf(reference)}/requests`, { expiresIn: '5', ...fields });

  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t.close());

  test('a FIXED intent: the form asks no amount; the request is listed, then approved, and the form goes', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 4_500 });
    const path = pathOf(intent.referenceNumber);
    const page = await owner.get(path);
    assert.match(page.html, /id="request-form"/);
    assert.doesNotMatch(page.html, /id="request-amount"/);
    assert.match(page.html, /id="request-expires" name="expiresIn" type="number" min="1" max="15"/);
    assert.match(page.html, /id="no-requests"/);

    const sent = await ask(owner, intent.referenceNumber, { phone: APPROVING_PHONE, message: 'Table 4' });
    assert.equal(sent.status, 303, sent.html.slice(0, 500));
    assert.equal(sent.location, `${path}?notice=done`);
    const pending = await owner.get(path);
    const [request] = listed(pending.html);
    assert.ok(request, pending.html);
    assert.deepEqual([request.status, request.words], ['PENDING', 'Waiting for the payer']);
    assert.match(pending.html, /Table 4/);
    const api = await t.request('GET', `/api/v1/dev/payment-requests/${request.id}`, { key: business.keys.secretTest });
    assert.deepEqual(
      [
        api.body.data.amount,
        api.body.data.phone,
        Date.parse(api.body.data.expiresAt) - Date.parse(api.body.data.createdAt),
      ],
      [4_500, APPROVING_PHONE, 300_000],
      "the minutes typed are the API's seconds",
    );

    // A second request while one waits: the page's line says why, in its words.
    const second = await ask(owner, intent.referenceNumber, { phone: newPhone() });
    assert.equal(second.status, 303);
    assert.equal(second.location, `${path}?error=PAYMENT_REQUEST_PENDING`);
    assert.match(
      (await owner.get(second.location!)).html,
      /This payment already has a request waiting for its answer\./,
    );

    await endDueRequests(t.runtime.db, { now: new Date(Date.now() + 3_000) });
    const paid = await owner.get(path);
    assert.deepEqual(
      listed(paid.html).map((row) => [row.status, row.words]),
      [['APPROVED', 'Approved']],
    );
    assert.match(paid.html, /data-status="PAID"/);
    assert.doesNotMatch(paid.html, /id="request-form"/, 'a paid intent asks nothing more');
  });

  test('an OPEN intent asks the amount; each wrong field is named at once, and what was typed is kept', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amountType: 'OPEN' });
    const page = await owner.get(pathOf(intent.referenceNumber));
    assert.match(page.html, /id="request-amount"/);

    const wrong = await ask(owner, intent.referenceNumber, {
      phone: 'not a phone',
      expiresIn: '20',
      message: 'x'.repeat(101),
      amount: 'abc',
    });
    assert.equal(wrong.status, 400, wrong.html.slice(0, 500));
    assert.match(wrong.html, /The form was not saved: check the fields marked below\./);
    assert.match(fieldError(wrong.html, 'phone') ?? '', /wallet phone number/);
    assert.match(fieldError(wrong.html, 'expiresIn') ?? '', /1 to 15/);
    assert.equal(fieldError(wrong.html, 'message'), 'The message is too long.');
    assert.match(fieldError(wrong.html, 'amount') ?? '', /amount in MRU/);
    assert.match(wrong.html, /value="not a phone" aria-invalid="true"/);

    const noAmount = await ask(owner, intent.referenceNumber, { phone: newPhone() });
    assert.equal(noAmount.status, 400);
    assert.equal(fieldError(noAmount.html, 'amount'), 'Fill in this field.');
    assert.equal(fieldError(noAmount.html, 'phone'), undefined);

    const national = newPhone().replace('+222', '');
    const sent = await ask(owner, intent.referenceNumber, { phone: national, amount: '12.50', expiresIn: '1' });
    assert.equal(sent.status, 303, sent.html.slice(0, 500));
    const listedNow = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}/requests`, {
      key: business.keys.secretTest,
    });
    assert.deepEqual(
      listedNow.body.data.items.map((item: { phone: string; amount: number }) => [item.phone, item.amount]),
      [[`+222${national}`, 1_250]],
    );
  });

  test('the refusals about the phone, by field and in the page language: muted, too many', async () => {
    const phone = newPhone();
    const sk = business.keys.secretTest;
    const arabic = (await signedIn(t, business.id)).client;
    assert.equal((await arabic.submit('/dashboard', '/dashboard/preferences', { lang: 'ar' })).status, 303);
    for (let index = 0; index < 3; index++) {
      const intent = await createIntent(t, sk, { amount: 1_000 });
      assert.equal((await ask(owner, intent.referenceNumber, { phone })).status, 303);
    }
    const fourth = await createIntent(t, sk, { amount: 1_000 });
    const tooMany = await ask(arabic, fourth.referenceNumber, { phone });
    assert.equal(tooMany.status, 429, tooMany.html.slice(0, 500));
    assert.match(tooMany.html, /<html lang="ar" dir="rtl">/);
    assert.equal(fieldError(tooMany.html, 'phone'), 'طلبات كثيرة جداً إلى هذا الهاتف. حاول لاحقاً.');

    const muting = newPhone();
    const intent = await createIntent(t, sk, { amount: 1_000 });
    assert.equal((await ask(owner, intent.referenceNumber, { phone: muting })).status, 303);
    const [first] = listed((await owner.get(pathOf(intent.referenceNumber))).html);
    await t.request('POST', `/api/v1/dev/payment-requests/${first!.id}/cancel`, { key: sk, idempotencyKey: true });
    await setMuted(t.runtime.db, { phone: muting, environment: 'test' }, business.id, true);
    const french = (await signedIn(t, business.id)).client;
    assert.equal((await french.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' })).status, 303);
    const muted = await ask(french, intent.referenceNumber, { phone: muting });
    assert.equal(muted.status, 403);
    assert.equal(fieldError(muted.html, 'phone'), 'Ce payeur n&#39;accepte pas les demandes de votre entreprise.');
    const rows = listed(muted.html);
    assert.deepEqual(
      rows.map((row) => [row.status, row.words]),
      [['CANCELLED', 'Annulée']],
    );
  });

  test('live: a phone without a wallet is refused on its field', async () => {
    const live = await t.createBusiness({ approveLive: true });
    const { client } = await signedIn(t, live.id);
    assert.equal((await client.submit('/dashboard', '/dashboard/preferences', { environment: 'live' })).status, 303);
    const intent = await createIntent(t, live.keys.secretLive, { amount: 2_000 });
    const refused = await ask(client, intent.referenceNumber, { phone: newPhone() });
    assert.equal(refused.status, 404, refused.html.slice(0, 500));
    assert.equal(fieldError(refused.html, 'phone'), 'No wallet has this phone number.');
  });

  test('an owner cancels a PENDING request from its row; a second cancel says it has ended', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 2_500 });
    const path = pathOf(intent.referenceNumber);
    assert.equal((await ask(owner, intent.referenceNumber, { phone: newPhone() })).status, 303);
    const page = await owner.get(path);
    const [request] = listed(page.html);
    assert.equal(request?.status, 'PENDING');
    const action = `${path}/requests/${request.id}/cancel`;
    assert.match(page.html, new RegExp(`action="${action}"`));
    assert.match(page.html, new RegExp(`aria-label="Cancel the request ${request.id}">Cancel</button>`));

    // The row's form as first drawn, kept to post from a second tab after the request has ended.
    const stale = hiddenFields(page.html, action);
    const forged = await owner.post(action, { ...stale, _csrf: 'not-the-session-token' });
    assert.equal(forged.status, 403, 'a post without the CSRF token of the session is refused');
    const cancelled = await owner.submit(path, action);
    assert.equal(cancelled.status, 303, cancelled.html.slice(0, 500));
    assert.equal(cancelled.location, `${path}?notice=done`);
    const after = await owner.get(cancelled.location!);
    assert.match(after.html, /<p class="notice" role="status">Done\.<\/p>/);
    assert.deepEqual(
      listed(after.html).map((row) => [row.status, row.words]),
      [['CANCELLED', 'Cancelled']],
    );
    assert.doesNotMatch(after.html, /aria-label="Cancel the request/, 'an ended request has no button');
    const api = await t.request('GET', `/api/v1/dev/payment-requests/${request.id}`, { key: business.keys.secretTest });
    assert.equal(api.body.data.status, 'CANCELLED');
    assert.match(after.html, /id="request-form"/, 'the intent is still payable: a new request can be sent');

    // Another tab's stale button (a new form token): the page says the request has ended, in its language.
    const again = await owner.post(action, stale);
    assert.equal(again.status, 303);
    assert.equal(again.location, `${path}?error=PAYMENT_REQUEST_NOT_PENDING`);
    assert.match((await owner.get(again.location!)).html, /This request was already answered or ended\./);
    const arabic = (await signedIn(t, business.id)).client;
    assert.equal((await arabic.submit('/dashboard', '/dashboard/preferences', { lang: 'ar' })).status, 303);
    const arabicPage = await arabic.get(again.location!);
    assert.match(arabicPage.html, /تم الرد على هذا الطلب أو انتهى\./);

    // A request of another intent is not this page's to cancel.
    const other = await createIntent(t, business.keys.secretTest, { amount: 1_000 });
    assert.equal((await ask(owner, other.referenceNumber, { phone: newPhone() })).status, 303);
    const [foreign] = listed((await owner.get(pathOf(other.referenceNumber))).html);
    const crossed = await owner.post(`${path}/requests/${foreign!.id}/cancel`, {
      ...stale,
      _idem: 'crossedTab0000000000',
    });
    assert.equal(crossed.location, `${path}?error=PAYMENT_REQUEST_NOT_FOUND`);
    assert.equal(listed((await owner.get(pathOf(other.referenceNumber))).html)[0]?.status, 'PENDING');
  });

  test('the Cancel button in French and Arabic', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 1_500 });
    assert.equal((await ask(owner, intent.referenceNumber, { phone: newPhone() })).status, 303);
    const french = (await signedIn(t, business.id)).client;
    assert.equal((await french.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' })).status, 303);
    const page = await french.get(pathOf(intent.referenceNumber));
    const [request] = listed(page.html);
    assert.match(page.html, new RegExp(`aria-label="Annuler la demande ${request!.id}">Annuler</button>`));
    const arabic = (await signedIn(t, business.id)).client;
    assert.equal((await arabic.submit('/dashboard', '/dashboard/preferences', { lang: 'ar' })).status, 303);
    const cancelled = await arabic.submit(
      pathOf(intent.referenceNumber),
      `${pathOf(intent.referenceNumber)}/requests/${request!.id}/cancel`,
    );
    assert.equal(cancelled.status, 303);
    const after = await arabic.get(cancelled.location!);
    assert.match(after.html, /<p class="notice" role="status">تم\.<\/p>/);
    assert.equal(listed(after.html)[0]?.status, 'CANCELLED');
  });

  test('a viewer sees no Cancel button and cannot cancel', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 1_000 });
    assert.equal((await ask(owner, intent.referenceNumber, { phone: newPhone() })).status, 303);
    const { client: viewer } = await signedIn(t, business.id, 'viewer');
    const page = await viewer.get(pathOf(intent.referenceNumber));
    const [request] = listed(page.html);
    assert.equal(request?.status, 'PENDING');
    assert.doesNotMatch(page.html, /\/cancel"/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const posted = await viewer.post(`${pathOf(intent.referenceNumber)}/requests/${request.id}/cancel`, {
      _csrf: csrf,
      _idem: 'viewerCancel00000000',
    });
    assert.equal(posted.status, 403);
    assert.equal(listed((await owner.get(pathOf(intent.referenceNumber))).html)[0]?.status, 'PENDING');
  });

  test('a viewer sees the requests but no form, and cannot send one', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 1_000 });
    assert.equal((await ask(owner, intent.referenceNumber, { phone: newPhone() })).status, 303);
    const { client: viewer } = await signedIn(t, business.id, 'viewer');
    const page = await viewer.get(pathOf(intent.referenceNumber));
    assert.equal(page.status, 200);
    assert.equal(listed(page.html).length, 1);
    assert.doesNotMatch(page.html, /id="request-form"/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const posted = await viewer.post(`${pathOf(intent.referenceNumber)}/requests`, {
      _csrf: csrf,
      _idem: 'viewer-request',
      phone: newPhone(),
      expiresIn: '5',
    });
    assert.equal(posted.status, 403);
    assert.equal(listed((await owner.get(pathOf(intent.referenceNumber))).html).length, 1);
  });
});
