import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { createLink, payLink, slugOf } from '../links/support.js';
import { createIntent } from '../intents/support.js';
import { RICH } from '../orders/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { hiddenFields, signedIn, type FormClient, type Page } from './support.js';

const LINKS = '/dashboard/links';
const NEW = `${LINKS}/new`;

/** The message drawn next to a field, by the input's aria-describedby. */
function fieldError(html: string, inputId: string): string | undefined {
  const input = new RegExp(`<(?:input|textarea|select)[^>]*id="${inputId}"[^>]*>`).exec(html)?.[0];
  assert(input, `no field #${inputId}`);
  const described = /aria-describedby="([^"]+)"/.exec(input)?.[1];
  if (!described || !/aria-invalid="true"/.test(input)) return undefined;
  return described
    .split(' ')
    .map((id) => new RegExp(`class="error field-error" id="${id}">([^<]*)<`).exec(html)?.[1])
    .find(Boolean);
}

/** The value an input is drawn with (a textarea's text). */
function valueOf(html: string, inputId: string): string {
  const textarea = new RegExp(`<textarea[^>]*id="${inputId}"[^>]*>([^<]*)</textarea>`).exec(html);
  if (textarea) return textarea[1]!;
  const input = new RegExp(`<input[^>]*id="${inputId}"[^>]*>`).exec(html)?.[0];
  assert(input, `no input #${inputId}`);
  return /value="([^"]*)"/.exec(input)?.[1] ?? '';
}

function refusedForm(page: Page, summary = 'The form was not saved: check the fields marked below.') {
  assert.equal(page.status, 400, page.html.slice(0, 400));
  assert.equal(page.location, null, 'drawn again, not redirected');
  assert.ok(page.html.includes(`role="alert">${summary}<`), page.html.slice(0, 2000));
}

/** The cells of the list's row of a link. */
function rowOf(html: string, reference: string): string {
  const row = new RegExp(`<tr id="${reference}">([\\s\\S]*?)</tr>`).exec(html)?.[1];
  assert(row, `no row ${reference}`);
  return row;
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/** Posts the new-link form as an owner's browser does. */
function createThroughForm(client: FormClient, fields: Record<string, string>) {
  return client.submit(NEW, LINKS, { amountType: 'FIXED', ...fields });
}

async function apiLink(t: TestApp, key: string, reference: string) {
  const response = await t.request('GET', `/api/v1/dev/payment-links/${reference}`, { key });
  expectStatus(response, 200);
  return response.body.data;
}

describe('dashboard: payment links (issue 50 item 5)', () => {
  let t: TestApp;
  let business: TestBusiness;
  let owner: FormClient;

  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '100000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000',
      },
    });
    business = await t.createBusiness();
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t?.close());

  test('an owner creates a FIXED link with every option; its page shares, copies and downloads it', async () => {
    const created = await createThroughForm(owner, {
      label: 'Couscous <royal>',
      amount: '1250.50',
      maxPayments: '50',
      expiresAt: '2099-01-31T18:30',
      collectName: 'on',
      collectNote: 'on',
      successUrl: 'https://shop.example/thanks',
      metadata: 'menu=friday\ntable = 4',
    });
    assert.equal(created.status, 303, created.html.slice(0, 500));
    const reference = /^\/dashboard\/links\/(PL-\d+)\?notice=done$/.exec(created.location ?? '')?.[1];
    assert.ok(reference, created.location ?? '');
    const link = await apiLink(t, business.keys.secretTest, reference);
    assert.deepEqual(
      {
        label: link.label,
        amountType: link.amountType,
        amount: link.amount,
        minAmount: link.minAmount,
        maxPayments: link.maxPayments,
        expiresAt: link.expiresAt,
        collect: link.collect,
        successUrl: link.successUrl,
        metadata: link.metadata,
        sandbox: link.sandbox,
      },
      {
        label: 'Couscous <royal>',
        amountType: 'FIXED',
        amount: 125_050,
        minAmount: null,
        maxPayments: 50,
        expiresAt: '2099-01-31T18:30:00.000Z',
        collect: { name: true, note: true },
        successUrl: 'https://shop.example/thanks',
        metadata: { menu: 'friday', table: '4' },
        sandbox: true,
      },
    );

    const page = await owner.get(created.location!);
    assert.equal(page.status, 200);
    assert.match(page.html, /role="status">Done\.</);
    assert.match(page.html, /<bdi id="label">Couscous &lt;royal&gt;<\/bdi>/);
    assert.match(page.html, /id="status" data-status="ACTIVE">Active</);
    assert.match(page.html, /<dd id="amount">1,250\.50\u00a0MRU<\/dd>/);
    assert.match(page.html, /<dd id="payments-count">0 of 50<\/dd>/);
    assert.match(page.html, /<dd id="expires">Jan 31, 2099, 6:30\s?PM\u00a0UTC<\/dd>/);
    // The address, to copy (the button appears with its script) and to share without a script.
    assert.match(page.html, new RegExp(`<input id="link-url" readonly dir="ltr" value="${link.url}"`));
    assert.match(
      page.html,
      /<button type="button" class="secondary" id="link-url-copy" data-copy="link-url" data-copied="Copied\." hidden>Copy</,
    );
    const whatsapp = /id="link-url-share" href="([^"]+)"/.exec(page.html)?.[1] ?? '';
    assert.equal(
      whatsapp.replace(/&amp;/g, '&'),
      `https://wa.me/?text=${encodeURIComponent(`Couscous <royal>\n${link.url}`)}`,
    );
    assert.match(
      page.html,
      /data-share="Share" data-share-title="Couscous &lt;royal&gt;" data-share-url="[^"]+">Share on WhatsApp<\/a>/,
    );
    assert.match(page.html, /<script src="\/dashboard\/assets\/copy\.js\?v=[^"]+" nonce="[^"]+" defer><\/script>/);
    // The QR code drawn on the page, and the files on the pay host.
    assert.match(page.html, /<div class="qr" role="img" aria-label="QR code of the payment link" id="qr"><svg/);
    assert.match(page.html, new RegExp(`id="download-svg" href="${link.url}/qr\\.svg" download`));
    assert.match(page.html, new RegExp(`id="download-png" href="${link.url}/qr\\.png" download`));
    assert.match(page.html, new RegExp(`id="download-poster" href="${link.url}/poster\\?lang=en"`));
    assert.equal(link.qrUrl, `${link.url}/qr.svg`);
    assert.match(page.html, /<dd id="collect">Asks the name · Offers a note<\/dd>/);
    assert.match(page.html, /id="no-payments">No payment through this link yet\./);

    // The script is served, and a double submit of one form makes one link.
    const script = /<script src="([^"]+)"/.exec(page.html)![1]!;
    const served = await owner.get(script);
    assert.equal(served.status, 200);
    assert.match(served.html, /navigator\.share/);
  });

  test('an OPEN link: a minimum and a maximum, one of them, or none', async () => {
    const both = await createThroughForm(owner, {
      label: 'Donation',
      amountType: 'OPEN',
      amount: '999',
      minAmount: '5',
      maxAmount: '100.5',
    });
    assert.equal(both.status, 303, both.html.slice(0, 600));
    const reference = /(PL-\d+)/.exec(both.location!)![1]!;
    const link = await apiLink(t, business.keys.secretTest, reference);
    assert.deepEqual([link.amountType, link.amount, link.minAmount, link.maxAmount], ['OPEN', null, 500, 10_050]);
    assert.match(
      (await owner.get(`${LINKS}/${reference}`)).html,
      /<dd id="amount">5\.00\u00a0MRU to 100\.50\u00a0MRU</,
    );
    const none = await createThroughForm(owner, { label: 'Tip jar', amountType: 'OPEN' });
    assert.equal(none.status, 303);
    const open = /(PL-\d+)/.exec(none.location!)![1]!;
    assert.match((await owner.get(`${LINKS}/${open}`)).html, /<dd id="amount">Any amount</);
    const floor = await createThroughForm(owner, { label: 'At least', amountType: 'OPEN', minAmount: '20' });
    assert.match((await owner.get(floor.location!)).html, /<dd id="amount">From 20\.00\u00a0MRU</);
  });

  test('a refused form marks every wrong field at once and keeps what was typed', async () => {
    const typed = {
      label: '   ',
      amount: '12,5x',
      maxPayments: '0',
      expiresAt: 'tomorrow',
      metadata: 'no equals sign',
      collectNote: 'on',
    };
    const refused = await createThroughForm(owner, typed);
    refusedForm(refused);
    assert.equal(fieldError(refused.html, 'label'), 'Fill in this field.');
    assert.match(refused.html, /id="label" name="label" maxlength="200"/);
    assert.equal(fieldError(refused.html, 'amount'), 'Enter an amount in MRU, such as 250 or 250.50.');
    assert.equal(fieldError(refused.html, 'maxPayments'), 'Enter a whole number from 1 to 1000000.');
    assert.equal(fieldError(refused.html, 'expiresAt'), 'Enter a date and a time.');
    assert.equal(fieldError(refused.html, 'metadata'), 'Write one key=value per line.');
    assert.match(refused.html, /<details id="advanced" open>/, 'Advanced opens on its refused field');
    assert.equal(valueOf(refused.html, 'amount'), '12,5x');
    assert.equal(valueOf(refused.html, 'maxPayments'), '0');
    assert.equal(valueOf(refused.html, 'metadata'), 'no equals sign');
    assert.match(refused.html, /id="collectNote" name="collectNote" checked/);
    assert.doesNotMatch(refused.html, /id="collectName" name="collectName" checked/);

    const missing = await createThroughForm(owner, { label: 'No amount', amount: '' });
    refusedForm(missing);
    assert.equal(fieldError(missing.html, 'amount'), 'Fill in this field.');

    // What the links service refuses, on its field.
    const cases: [Record<string, string>, string, string][] = [
      [{ amount: '0' }, 'amount', 'Enter an amount between 0.01 MRU and 1,000,000.00\u00a0MRU.'],
      [{ amount: '1000000.01' }, 'amount', 'Enter an amount between 0.01 MRU and 1,000,000.00\u00a0MRU.'],
      [{ amountType: 'OPEN', minAmount: '50', maxAmount: '20' }, 'minAmount', 'The minimum is more than the maximum.'],
      [{ expiresAt: '2001-01-01T00:00' }, 'expiresAt', 'Choose a moment in the future.'],
      [{ successUrl: 'ftp://shop.example' }, 'successUrl', 'Enter an address starting with https:// or http://.'],
      [{ label: 'x'.repeat(201) }, 'label', 'Write what is paid for, in at most 200 characters.'],
      [
        { metadata: `note=${'x'.repeat(501)}` },
        'metadata',
        'At most 50 entries; names of 1 to 40 characters, values of at most 500.',
      ],
      [
        { metadata: `${'k'.repeat(41)}=v` },
        'metadata',
        'At most 50 entries; names of 1 to 40 characters, values of at most 500.',
      ],
    ];
    for (const [fields, field, message] of cases) {
      const answer = await createThroughForm(owner, { label: 'Refused', amount: '10', ...fields });
      refusedForm(answer);
      assert.equal(fieldError(answer.html, field), message, JSON.stringify(fields));
      assert.equal(valueOf(answer.html, 'label'), fields.label ?? 'Refused');
    }
    const refusedLabels = (
      await t.request('GET', '/api/v1/dev/payment-links?limit=100', { key: business.keys.secretTest })
    ).body.data.items.filter((item: { label: string }) => item.label === 'Refused');
    assert.equal(refusedLabels.length, 0, 'nothing was created');
  });

  test('a link page lists its payments, each linking to its payment page; the list counts and sums them', async () => {
    const sk = business.keys.secretTest;
    const link = await createLink(t, sk, {
      label: 'Thieboudienne',
      amountType: 'FIXED',
      amount: 1_500,
      maxPayments: 3,
      collect: { name: true, note: true },
    });
    for (const name of ['Aicha', 'Mohamed']) {
      const paid = await payLink(t, link, { ...RICH, name, note: `for ${name}` });
      expectStatus(paid, 200);
    }
    const intents = (await t.request('GET', `/api/v1/dev/payment-links/${link.referenceNumber}/intents`, { key: sk }))
      .body.data.items as { referenceNumber: string }[];
    assert.equal(intents.length, 2);
    const page = await owner.get(`${LINKS}/${link.referenceNumber}`);
    assert.match(page.html, /<dd id="payments-count">2 of 3<\/dd>/);
    assert.match(page.html, /<dd id="collected">30\.00\u00a0MRU<\/dd>/);
    const table = /<table id="payments">[\s\S]*?<\/table>/.exec(page.html)?.[0] ?? '';
    // Newest first, each to its own payment page.
    const hrefs = [...table.matchAll(/href="(\/dashboard\/payments\/[^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(
      hrefs,
      intents.map((intent) => `/dashboard/payments/${intent.referenceNumber}`),
    );
    assert.match(text(table), /Mohamed Note: for Mohamed 15\.00\sMRU Paid/);
    for (const href of hrefs) assert.equal((await owner.get(href!)).status, 200);

    const list = await owner.get(LINKS);
    const row = text(rowOf(list.html, link.referenceNumber));
    assert.match(row, /^Thieboudienne PL-\d+ 15\.00\sMRU 2 of 3 30\.00\sMRU Active/);

    // The last payment completes it.
    expectStatus(await payLink(t, link, { ...RICH, name: 'Sidi' }), 200);
    const completed = await owner.get(`${LINKS}/${link.referenceNumber}`);
    assert.match(completed.html, /id="status" data-status="COMPLETED">Completed</);
    assert.match(completed.html, /id="takes-no-payment">This link takes no payment now\./);
  });

  test('deactivate with a message, then reactivate: the payer page follows', async () => {
    const sk = business.keys.secretTest;
    const link = await createLink(t, sk, { label: 'Bissap', amountType: 'FIXED', amount: 300 });
    const path = `${LINKS}/${link.referenceNumber}`;
    const tooLong = await owner.submit(path, `${path}/deactivate`, { inactiveMessage: 'x'.repeat(501) });
    refusedForm(tooLong);
    assert.equal(fieldError(tooLong.html, 'inactiveMessage'), 'Keep the message to 500 characters.');
    assert.equal((await apiLink(t, sk, link.referenceNumber)).active, true, 'nothing changed');
    // The API's limit, counted the same way: 500 emoji are 1,000 UTF-16 units, and one more is refused.
    assert.match(tooLong.html, /id="inactiveMessage" name="inactiveMessage" rows="2" maxlength="500"/);
    const emojiTooLong = await owner.submit(path, `${path}/deactivate`, { inactiveMessage: '🥖'.repeat(501) });
    refusedForm(emojiTooLong);
    assert.equal(fieldError(emojiTooLong.html, 'inactiveMessage'), 'Keep the message to 500 characters.');
    assert.equal((await apiLink(t, sk, link.referenceNumber)).active, true, 'nothing changed');

    const off = await owner.submit(path, `${path}/deactivate`, { inactiveMessage: 'Sold out, thank you!' });
    assert.equal(off.status, 303);
    assert.equal(off.location, `${path}?notice=done`);
    const inactive = await owner.get(path);
    assert.match(inactive.html, /id="status" data-status="INACTIVE">Deactivated</);
    assert.match(inactive.html, /<q id="inactive-message">Sold out, thank you!<\/q>/);
    assert.doesNotMatch(inactive.html, /\/deactivate"/);
    const payer = await t.request('GET', `/checkout/links/${slugOf(link)}`);
    expectStatus(payer, 200);
    assert.equal(payer.body.data.status, 'INACTIVE');
    assert.equal(payer.body.data.inactiveMessage, 'Sold out, thank you!');
    const refusedPayment = await payLink(t, link, RICH);
    assert.equal(refusedPayment.status, 409, refusedPayment.text);
    assert.equal(refusedPayment.body.error.code, 'PAYMENT_LINK_INACTIVE');
    const listed = await owner.get(`${LINKS}?status=INACTIVE`);
    assert.match(rowOf(listed.html, link.referenceNumber), /data-status="INACTIVE">Deactivated</);
    assert.doesNotMatch((await owner.get(`${LINKS}?status=ACTIVE`)).html, new RegExp(link.referenceNumber));

    const on = await owner.submit(path, `${path}/reactivate`);
    assert.equal(on.status, 303);
    assert.match((await owner.get(path)).html, /id="status" data-status="ACTIVE">Active</);
    expectStatus(await payLink(t, link, RICH), 200);
  });

  test('a form sent twice makes one link', async () => {
    const page = await owner.get(NEW);
    const form = { ...hiddenFields(page.html, LINKS), label: 'Once', amountType: 'FIXED', amount: '10' };
    const first = await owner.post(LINKS, form);
    const second = await owner.post(LINKS, form);
    assert.equal(first.status, 303);
    assert.equal(second.location, first.location!.replace('notice=done', 'notice=already'));
    const items = (await t.request('GET', '/api/v1/dev/payment-links?limit=100', { key: business.keys.secretTest }))
      .body.data.items as { label: string }[];
    assert.equal(items.filter((item) => item.label === 'Once').length, 1);
  });

  test('the list: newest first, 20 a page, an expired link said so', async () => {
    const other = await t.createBusiness();
    const { client } = await signedIn(t, other.id);
    const empty = await client.get(LINKS);
    assert.match(empty.html, /id="empty">No payment links yet\./);
    assert.match(empty.html, /<a href="\/dashboard\/links" aria-current="page">Payment links<\/a>/);
    const made: string[] = [];
    for (let i = 1; i <= 21; i++) {
      const link = await createLink(t, other.keys.secretTest, { label: `Link ${i}`, amountType: 'OPEN' });
      made.push(link.referenceNumber);
    }
    await t.runtime.db
      .updateTable('payment_links')
      .set({ expires_at: new Date(Date.now() - 60_000) })
      .where('reference_number', '=', made[20]!)
      .execute();
    const first = await client.get(LINKS);
    const order = [...first.html.matchAll(/<tr id="(PL-\d+)">/g)].map((m) => m[1]);
    assert.deepEqual(order, made.slice(1).reverse());
    assert.match(rowOf(first.html, made[20]!), /data-status="EXPIRED">Expired</);
    assert.match(first.html, /Page 1 of 2 · 21/);
    assert.match(first.html, /rel="next" href="\/dashboard\/links\?&page=2"/);
    const second = await client.get(`${LINKS}?page=2`);
    assert.deepEqual(
      [...second.html.matchAll(/<tr id="(PL-\d+)">/g)].map((m) => m[1]),
      [made[0]],
    );
    const expired = await client.get(`${LINKS}?status=EXPIRED`);
    assert.deepEqual(
      [...expired.html.matchAll(/<tr id="(PL-\d+)">/g)].map((m) => m[1]),
      [made[20]],
    );
    assert.match((await client.get(`${LINKS}?status=COMPLETED`)).html, /id="empty">No payment link has this status\./);
    // Another business's link does not exist here.
    const theirs = await owner.get(`${LINKS}/${made[0]}`);
    assert.equal(theirs.status, 404);
    assert.match(theirs.html, /No payment link has this reference\./);
  });

  test('test and live: each mode lists its own links; a test link in live mode is a mismatch', async () => {
    const live = await t.createBusiness({ approveLive: true });
    const { client } = await signedIn(t, live.id);
    const testLink = await createLink(t, live.keys.secretTest, { label: 'Sandbox tea', amountType: 'OPEN' });
    const liveLink = await createLink(t, live.keys.secretLive, { label: 'Real tea', amountType: 'OPEN' });
    const testList = await client.get(LINKS);
    assert.match(testList.html, new RegExp(`<tr id="${testLink.referenceNumber}">`));
    assert.doesNotMatch(testList.html, new RegExp(liveLink.referenceNumber));
    assert.equal((await client.submit('/dashboard', '/dashboard/preferences', { environment: 'live' })).status, 303);
    const liveList = await client.get(LINKS);
    assert.match(liveList.html, new RegExp(`<tr id="${liveLink.referenceNumber}">`));
    assert.doesNotMatch(liveList.html, new RegExp(testLink.referenceNumber));
    const mismatch = await client.get(`${LINKS}/${testLink.referenceNumber}`);
    assert.equal(mismatch.status, 403);
    assert.match(mismatch.html, /Test mode and live mode keep their data apart\./);
    const made = await client.submit(NEW, LINKS, { label: 'Live bread', amountType: 'FIXED', amount: '40' });
    assert.equal(made.status, 303);
    const reference = /(PL-\d+)/.exec(made.location!)![1]!;
    assert.equal((await apiLink(t, live.keys.secretLive, reference)).sandbox, false);
  });

  test('a viewer sees the links and their pages but is offered no change and can make none', async () => {
    const sk = business.keys.secretTest;
    const link = await createLink(t, sk, { label: 'Viewed', amountType: 'FIXED', amount: 500 });
    const { client: viewer } = await signedIn(t, business.id, 'viewer');
    const list = await viewer.get(LINKS);
    assert.equal(list.status, 200);
    assert.match(list.html, new RegExp(`<tr id="${link.referenceNumber}">`));
    assert.doesNotMatch(list.html, /id="new-link"/);
    const path = `${LINKS}/${link.referenceNumber}`;
    const page = await viewer.get(path);
    assert.equal(page.status, 200);
    assert.match(page.html, /id="link-url-share"/);
    assert.doesNotMatch(page.html, /\/deactivate"|\/reactivate"/);
    const form = await viewer.get(NEW);
    assert.equal(form.status, 403);
    assert.match(form.html, /Your role in this business does not allow this\./);

    // Forms copied from an owner's pages, posted with the viewer's own token: refused, nothing changes.
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const created = await viewer.post(LINKS, { _csrf: csrf, _idem: 'viewer-1', label: 'Nope', amountType: 'OPEN' });
    assert.equal(created.status, 403);
    const off = await viewer.post(`${path}/deactivate`, { _csrf: csrf, _idem: 'viewer-2' });
    assert.equal(off.status, 403);
    assert.match(off.html, /Your role in this business does not allow this\./);
    assert.equal((await apiLink(t, sk, link.referenceNumber)).active, true);
    const labels = (await t.request('GET', '/api/v1/dev/payment-links?limit=100', { key: sk })).body.data.items.map(
      (item: { label: string }) => item.label,
    );
    assert.ok(!labels.includes('Nope'));
  });

  test('in Arabic (right to left) and French: the pages, the statuses and the refusals in the language', async () => {
    const sk = business.keys.secretTest;
    const link = await createLink(t, sk, { label: 'Lait', amountType: 'OPEN', minAmount: 1_000, maxAmount: 5_000 });
    const { client: arabic } = await signedIn(t, business.id);
    assert.equal((await arabic.submit('/dashboard', '/dashboard/preferences', { lang: 'ar' })).status, 303);
    const list = await arabic.get(LINKS);
    assert.match(list.html, /<html lang="ar" dir="rtl">/);
    assert.match(list.html, /<h1>روابط الدفع<\/h1>/);
    assert.match(rowOf(list.html, link.referenceNumber), /data-status="ACTIVE">نشط</);
    assert.match(rowOf(list.html, link.referenceNumber), /من 10\.00\u00a0أوقية إلى 50\.00\u00a0أوقية/);
    const page = await arabic.get(`${LINKS}/${link.referenceNumber}`);
    assert.match(page.html, /data-share="مشاركة" [^>]*>مشاركة على واتساب</);
    assert.match(page.html, /poster\?lang=ar"/);
    const refused = await arabic.submit(NEW, LINKS, { label: '', amountType: 'FIXED', amount: 'abc' });
    refusedForm(refused, 'لم يُحفظ النموذج: راجع الحقول المشار إليها أدناه.');
    assert.equal(fieldError(refused.html, 'amount'), 'أدخل مبلغًا بالأوقية، مثل 250 أو 250.50.');

    const { client: french } = await signedIn(t, business.id);
    assert.equal((await french.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' })).status, 303);
    const frList = await french.get(LINKS);
    assert.match(frList.html, /<html lang="fr" dir="ltr">/);
    assert.match(frList.html, /<a href="\/dashboard\/links\/new" id="new-link">Nouveau lien de paiement<\/a>/);
    const frPage = await french.get(`${LINKS}/${link.referenceNumber}`);
    assert.match(frPage.html, /<dd id="amount">De 10,00\u00a0MRU à 50,00\u00a0MRU<\/dd>/);
    assert.match(frPage.html, /poster\?lang=fr"/);
    const frRefused = await french.submit(NEW, LINKS, {
      label: 'Pain',
      amountType: 'OPEN',
      minAmount: '30',
      maxAmount: '20',
    });
    refusedForm(frRefused, 'Le formulaire n&#39;a pas été enregistré : vérifiez les champs signalés ci-dessous.');
    assert.equal(fieldError(frRefused.html, 'minAmount'), 'Le minimum est supérieur au maximum.');
  });

  test("the Payments page's one-time payment is never called a payment link, in any language", async () => {
    const words = {
      en: ['New one-time payment', 'Link to pay this payment'],
      fr: ['Nouveau paiement unique', 'Lien pour régler ce paiement'],
      ar: ['دفعة جديدة لمرة واحدة', 'رابط لتسديد هذه الدفعة'],
    };
    const { client } = await signedIn(t, business.id);
    const intent = await createIntent(t, business.keys.secretTest, { amount: 1_000 });
    for (const [lang, [button, section]] of Object.entries(words)) {
      assert.equal((await client.submit('/dashboard', '/dashboard/preferences', { lang })).status, 303);
      const list = await client.get('/dashboard/payments');
      assert.ok(list.html.includes(`id="new-payment">${button}</a>`), `${lang}: ${button}`);
      const form = await client.get('/dashboard/payments/new');
      assert.ok(form.html.includes(`<h1>${button}</h1>`), lang);
      assert.match(form.html, /<a href="\/dashboard\/links\/new" id="to-links">/);
      const payment = await client.get(`/dashboard/payments/${intent.referenceNumber}`);
      assert.ok(payment.html.includes(`<h2 id="h-link">${section}</h2>`), `${lang}: ${section}`);
    }
  });
});
