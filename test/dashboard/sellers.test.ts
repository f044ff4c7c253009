import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { commissionBps } from '../../src/modules/dashboard/pages/sellers/form.js';
import { act, createIntent } from '../intents/support.js';
import { createSeller, getSeller, sellerEvents, SELLERS as API } from '../sellers/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { hiddenFields, signedIn, type FormClient, type Page } from './support.js';

const SELLERS = '/dashboard/sellers';
const NEW = `${SELLERS}/new`;

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

function valueOf(html: string, inputId: string): string {
  const input = new RegExp(`<input[^>]*id="${inputId}"[^>]*>`).exec(html)?.[0];
  assert(input, `no input #${inputId}`);
  return /value="([^"]*)"/.exec(input)?.[1] ?? '';
}

function refusedForm(page: Page, summary = 'The form was not saved: check the fields marked below.') {
  assert.equal(page.status, 400, page.html.slice(0, 400));
  assert.equal(page.location, null, 'drawn again, not redirected');
  assert.ok(page.html.includes(`role="alert">${summary}<`), page.html.slice(0, 2000));
}

function rowOf(html: string, id: string): string {
  const row = new RegExp(`<tr id="${id}">([\\s\\S]*?)</tr>`).exec(html)?.[1];
  assert(row, `no row ${id}`);
  return row;
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

const idOf = (location: string | null) => /^\/dashboard\/sellers\/(SL-\d{16})\?notice=done$/.exec(location ?? '')?.[1];

describe('dashboard: sellers (issue 52 item 5)', () => {
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

  test('a commission in % is read as bps exactly, as an MRU amount is read as centimes', () => {
    const cases: [string, number | undefined][] = [
      ['', 0],
      ['0', 0],
      ['12.5', 1250],
      ['12,34', undefined],
      ['0.29', 29],
      ['0.57', 57],
      ['1.15', 115],
      [' 7 % ', 700],
      ['100', 10_000],
      ['100.01', undefined],
      ['12.345', undefined],
      ['-1', undefined],
      ['1e2', undefined],
      ['abc', undefined],
    ];
    for (const [typed, bps] of cases) assert.equal(commissionBps(typed, 'en'), bps, typed);
    assert.equal(commissionBps('12,34 %', 'fr'), 1234);
    assert.equal(commissionBps('12 MRU', 'en'), undefined);
  });

  test('an owner creates a seller (a local number, a commission with decimals); its page shows it', async () => {
    const created = await owner.submit(NEW, SELLERS, {
      name: '  Stall <12>  ',
      phone: '36 00 00 12',
      commission: '12.34',
    });
    assert.equal(created.status, 303, created.html.slice(0, 800));
    const id = idOf(created.location);
    assert.ok(id, created.location ?? '');
    const seller = await getSeller(t, business.keys.secretTest, id);
    assert.deepEqual(
      [seller.name, seller.phone, seller.commissionBps, seller.status, seller.sandbox],
      ['Stall <12>', '+22236000012', 1234, 'ACTIVE', true],
    );
    const page = await owner.get(created.location!);
    assert.equal(page.status, 200);
    assert.match(page.html, /role="status">Done\.</);
    assert.match(page.html, /<bdi id="name-title">Stall &lt;12&gt;<\/bdi>/);
    assert.match(page.html, /id="status" data-status="ACTIVE">Active</);
    assert.match(page.html, /<dd id="commission-shown">12\.34%<\/dd>/);
    assert.match(page.html, /<dd class="mono" id="phone-shown">\+22236000012<\/dd>/);
    assert.match(page.html, /<p class="figure" id="balance">0\.00\u00a0MRU<\/p>/);
    // The edit form starts from the seller as it is.
    assert.equal(valueOf(page.html, 'commission'), '12.34');
    assert.equal(valueOf(page.html, 'phone'), '+22236000012');
    assert.match(page.html, /<option value="ACTIVE" selected>Active<\/option>/);
    assert.deepEqual(
      (await sellerEvents(t, id)).map((e) => e.event),
      ['seller.created'],
    );
  });

  test('edit, then disable: the list and the filter follow; an unchanged form writes nothing', async () => {
    const sk = business.keys.secretTest;
    const seller = await createSeller(t, sk, { name: 'Fatou', phone: '+22236000001', commissionBps: 500 });
    const path = `${SELLERS}/${seller.id}`;
    const edited = await owner.submit(path, path, {
      name: 'Fatou Couture',
      phone: '+22136000001',
      commission: '7.5',
      status: 'ACTIVE',
    });
    assert.equal(edited.status, 303, edited.html.slice(0, 600));
    assert.equal(edited.location, `${path}?notice=done`);
    let stored = await getSeller(t, sk, seller.id);
    assert.deepEqual([stored.name, stored.phone, stored.commissionBps], ['Fatou Couture', '+22136000001', 750]);

    // Saved as drawn: nothing differs, no event.
    const page = await owner.get(path);
    const same = await owner.post(path, {
      ...hiddenFields(page.html, path),
      name: valueOf(page.html, 'name'),
      phone: valueOf(page.html, 'phone'),
      commission: valueOf(page.html, 'commission'),
      status: 'ACTIVE',
    });
    assert.equal(same.status, 303);
    assert.deepEqual(
      (await sellerEvents(t, seller.id)).map((e) => e.event),
      ['seller.created', 'seller.updated'],
    );

    const disabled = await owner.submit(path, path, {
      name: 'Fatou Couture',
      phone: '+22136000001',
      commission: '7.5',
      status: 'DISABLED',
    });
    assert.equal(disabled.status, 303);
    stored = await getSeller(t, sk, seller.id);
    assert.equal(stored.status, 'DISABLED');
    assert.match((await owner.get(path)).html, /id="status" data-status="DISABLED">Disabled</);
    const list = await owner.get(`${SELLERS}?status=DISABLED`);
    assert.match(rowOf(list.html, seller.id), /data-status="DISABLED">Disabled</);
    assert.doesNotMatch((await owner.get(`${SELLERS}?status=ACTIVE`)).html, new RegExp(seller.id));
  });

  test('bad input is shown at its field, what was typed kept, nothing written', async () => {
    const before = (await t.request('GET', `${API}?limit=100`, { key: business.keys.secretTest })).body.data.total;
    const refused = await owner.submit(NEW, SELLERS, { name: '   ', phone: '1234', commission: '12.345' });
    refusedForm(refused);
    assert.equal(fieldError(refused.html, 'name'), 'Fill in this field.');
    assert.equal(fieldError(refused.html, 'phone'), 'Enter a phone number: 8 digits, or + and the country code.');
    assert.equal(fieldError(refused.html, 'commission'), 'Enter a percentage from 0 to 100, with at most 2 decimals.');
    assert.equal(valueOf(refused.html, 'phone'), '1234');
    assert.equal(valueOf(refused.html, 'commission'), '12.345');

    const cases: [Record<string, string>, string, string][] = [
      [{ phone: '' }, 'phone', 'Fill in this field.'],
      [{ commission: '100.5' }, 'commission', 'Enter a percentage from 0 to 100, with at most 2 decimals.'],
      [{ name: 'é'.repeat(201) }, 'name', 'Write the seller&#39;s name, in at most 200 characters.'],
    ];
    for (const [fields, field, message] of cases) {
      const answer = await owner.submit(NEW, SELLERS, { name: 'Refused', phone: '36000099', ...fields });
      refusedForm(answer);
      assert.equal(fieldError(answer.html, field), message, JSON.stringify(fields));
    }
    // 200 characters is the API's own limit, counted as it counts them.
    const longest = await owner.submit(NEW, SELLERS, { name: '🥖'.repeat(200), phone: '36000099' });
    assert.equal(longest.status, 303, longest.html.slice(0, 500));

    const seller = await createSeller(t, business.keys.secretTest, { name: 'Kept' });
    const path = `${SELLERS}/${seller.id}`;
    const edit = await owner.submit(path, path, { name: 'Kept', phone: '+0123', commission: '', status: 'DISABLED' });
    refusedForm(edit);
    assert.equal(fieldError(edit.html, 'phone'), 'Enter a phone number: 8 digits, or + and the country code.');
    assert.match(edit.html, /<option value="DISABLED" selected>/, 'the status as chosen');
    assert.equal((await getSeller(t, business.keys.secretTest, seller.id)).status, 'ACTIVE', 'nothing changed');
    const after = (await t.request('GET', `${API}?limit=100`, { key: business.keys.secretTest })).body.data.total;
    assert.equal(after, before + 2, 'only the longest name and the API seller were made');
  });

  test('the list: balances in MRU, newest first, 20 a page; another business sees none of them', async () => {
    const other = await t.createBusiness();
    const { client } = await signedIn(t, other.id);
    const empty = await client.get(SELLERS);
    assert.match(empty.html, /id="empty">No sellers yet\./);
    assert.match(empty.html, /<a href="\/dashboard\/sellers" aria-current="page">Sellers<\/a>/);
    const made: string[] = [];
    for (let i = 1; i <= 21; i++) {
      made.push((await createSeller(t, other.keys.secretTest, { name: `Stall ${i}`, commissionBps: 250 })).id);
    }
    // A balance: the seller's share of a split payment.
    const split = await createIntent(t, other.keys.secretTest, {
      amount: 1_300_000,
      splits: [{ seller: made[20]!, amount: 1_234_550 }],
    });
    expectStatus(await act(t, other.keys.secretTest, split.referenceNumber, 'simulate', {}), 200);
    const first = await client.get(SELLERS);
    assert.deepEqual(
      [...first.html.matchAll(/<tr id="(SL-\d+)">/g)].map((m) => m[1]),
      made.slice(1).reverse(),
    );
    assert.match(
      text(rowOf(first.html, made[20]!)),
      /^Stall 21 SL-\d{16} \+22236000012 2\.50% 12,345\.50\sMRU Active /,
    );
    assert.match(first.html, /Page 1 of 2 · 21/);
    assert.match(first.html, /rel="next" href="\/dashboard\/sellers\?&page=2"/);
    assert.match((await client.get(`${SELLERS}/${made[20]}`)).html, /id="balance">12,345\.50\u00a0MRU</);
    const second = await client.get(`${SELLERS}?page=2`);
    assert.deepEqual(
      [...second.html.matchAll(/<tr id="(SL-\d+)">/g)].map((m) => m[1]),
      [made[0]],
    );
    assert.match((await client.get(`${SELLERS}?status=DISABLED`)).html, /id="empty">No seller has this status\./);
    const theirs = await owner.get(`${SELLERS}/${made[0]}`);
    assert.equal(theirs.status, 404);
    assert.match(theirs.html, /No seller has this id\./);
  });

  test('a viewer sees the sellers but is offered no change and can make none; a forged form is refused', async () => {
    const sk = business.keys.secretTest;
    const seller = await createSeller(t, sk, { name: 'Viewed' });
    const { client: viewer } = await signedIn(t, business.id, 'viewer');
    const list = await viewer.get(SELLERS);
    assert.equal(list.status, 200);
    assert.match(list.html, new RegExp(`<tr id="${seller.id}">`));
    assert.doesNotMatch(list.html, /id="new-seller"/);
    const path = `${SELLERS}/${seller.id}`;
    const page = await viewer.get(path);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.html, /id="seller-form"/);
    const form = await viewer.get(NEW);
    assert.equal(form.status, 403);
    assert.match(form.html, /Your role in this business does not allow this\./);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const created = await viewer.post(SELLERS, { _csrf: csrf, _idem: 'v-1', name: 'Nope', phone: '36000001' });
    assert.equal(created.status, 403);
    const edited = await viewer.post(path, {
      _csrf: csrf,
      _idem: 'v-2',
      name: 'Nope',
      phone: '36000001',
      status: 'DISABLED',
    });
    assert.equal(edited.status, 403);
    assert.match(edited.html, /Your role in this business does not allow this\./);
    assert.equal((await getSeller(t, sk, seller.id)).status, 'ACTIVE');

    // An owner's form without its token, or with another session's: refused before it is read.
    const ownerPage = await owner.get(path);
    const fields = { ...hiddenFields(ownerPage.html, path), name: 'Forged', phone: '36000001', status: 'DISABLED' };
    for (const _csrf of ['', 'not-the-token', csrf]) {
      const forged = await owner.post(path, { ...fields, _csrf });
      assert.equal(forged.status, 403);
      assert.match(forged.html, /This form expired or did not come from this dashboard\./);
    }
    assert.equal((await getSeller(t, sk, seller.id)).name, 'Viewed');
  });

  test('a form sent twice makes one seller', async () => {
    const page = await owner.get(NEW);
    const form = { ...hiddenFields(page.html, SELLERS), name: 'Once', phone: '36000003', commission: '1' };
    const first = await owner.post(SELLERS, form);
    const second = await owner.post(SELLERS, form);
    assert.equal(first.status, 303);
    assert.equal(second.location, first.location!.replace('notice=done', 'notice=already'));
    const items = (await t.request('GET', `${API}?limit=100`, { key: business.keys.secretTest })).body.data.items as {
      name: string;
    }[];
    assert.equal(items.filter((item) => item.name === 'Once').length, 1);
  });

  test('in Arabic (right to left) and French: the pages, the statuses and the refusals in the language', async () => {
    const seller = await createSeller(t, business.keys.secretTest, { name: 'Aminetou', commissionBps: 1_050 });
    const { client: arabic } = await signedIn(t, business.id);
    assert.equal((await arabic.submit('/dashboard', '/dashboard/preferences', { lang: 'ar' })).status, 303);
    const list = await arabic.get(SELLERS);
    assert.match(list.html, /<html lang="ar" dir="rtl">/);
    assert.match(list.html, /<h1>البائعون<\/h1>/);
    assert.match(rowOf(list.html, seller.id), /data-status="ACTIVE">نشط</);
    const refused = await arabic.submit(NEW, SELLERS, { name: 'بائع', phone: '12', commission: '101' });
    refusedForm(refused, 'لم يُحفظ النموذج: راجع الحقول المشار إليها أدناه.');
    assert.equal(fieldError(refused.html, 'phone'), 'أدخل رقم هاتف: 8 أرقام، أو + ورمز البلد.');
    assert.equal(fieldError(refused.html, 'commission'), 'أدخل نسبة مئوية من 0 إلى 100، بمنزلتين عشريتين على الأكثر.');

    const { client: french } = await signedIn(t, business.id);
    assert.equal((await french.submit('/dashboard', '/dashboard/preferences', { lang: 'fr' })).status, 303);
    const page = await french.get(`${SELLERS}/${seller.id}`);
    assert.match(page.html, /<html lang="fr" dir="ltr">/);
    assert.match(page.html, /<dd id="commission-shown">10,50\u00a0%<\/dd>/);
    // The commission is written back as French writes it, and read back the same.
    assert.equal(valueOf(page.html, 'commission'), '10,50');
    const saved = await french.submit(`${SELLERS}/${seller.id}`, `${SELLERS}/${seller.id}`, {
      name: 'Aminetou',
      phone: '+22236000012',
      commission: '10,50',
      status: 'ACTIVE',
    });
    assert.equal(saved.status, 303);
    assert.equal((await getSeller(t, business.keys.secretTest, seller.id)).commissionBps, 1_050);
    const frRefused = await french.submit(NEW, SELLERS, { name: '', phone: '36000001' });
    refusedForm(frRefused, 'Le formulaire n&#39;a pas été enregistré : vérifiez les champs signalés ci-dessous.');
    assert.equal(fieldError(frRefused.html, 'name'), 'Remplissez ce champ.');
  });
});
