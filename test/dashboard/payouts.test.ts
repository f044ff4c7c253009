import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { formatAmount, formatPageAmount } from '../../src/lib/i18n.js';
import { SEAL_MAX_AGE_SECONDS, sealBatch } from '../../src/modules/dashboard/pages/payouts/input.js';
import { hashToken } from '../../src/modules/dashboard/sessions.js';
import { sendDuePayouts } from '../../src/modules/payouts/send.js';
import { assertLedgerSound, fold, setPlan } from '../payments/support.js';
import { earn, newPhone } from '../payouts/support.js';
import { multipartBody } from '../support/multipart.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { hiddenFields, signedIn, type FormClient, type Page } from './support.js';

const PAYOUTS = '/dashboard/payouts';
const REVIEW = `${PAYOUTS}/review`;
const BATCH = `${PAYOUTS}/batch`;
const mru = (centimes: number) => formatAmount(centimes, 'en');

/** The text of the element with this id (its first text, tags stripped). */
function textOf(html: string, id: string): string {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(dd|span|p|td|strong)>`).exec(html);
  assert(match, `no element #${id}`);
  return match[1]!.replace(/<[^>]+>/g, '').trim();
}

/** The hidden fields of a form as a browser sends them: their entities decoded. */
function formFields(html: string, action: string): Record<string, string> {
  const entities: Record<string, string> = { '&quot;': '"', '&#39;': "'", '&lt;': '<', '&gt;': '>', '&amp;': '&' };
  return Object.fromEntries(
    Object.entries(hiddenFields(html, action)).map(([name, value]) => [
      name,
      value.replace(/&(quot|#39|lt|gt|amp);/g, (entity) => entities[entity]!),
    ]),
  );
}

/** The references of the payouts a list page shows, in its order. */
function listed(html: string): string[] {
  return [...html.matchAll(/<tr id="(PO-[0-9]{16})"/g)].map((match) => match[1]!);
}

/** Posts a multipart form as a browser does: its fields, then the file part if any. */
async function postMultipart(
  t: TestApp,
  client: FormClient,
  action: string,
  fields: Record<string, string>,
  file?: { content: string; filename: string },
): Promise<Page> {
  const { body, contentType } = multipartBody([
    ...Object.entries(fields).map(([field, content]) => ({ field, content })),
    ...(file ? [{ field: 'file', filename: file.filename, contentType: 'text/csv', content: file.content }] : []),
  ]);
  const response = await fetch(`${t.baseUrl}${action}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': contentType, cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    body,
  });
  return {
    status: response.status,
    location: response.headers.get('location'),
    html: await response.text(),
    headers: response.headers,
  };
}

describe('dashboard payouts: list, a payout in two steps, a batch from CSV, a payout page, cancel', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  let owner: FormClient;
  let viewer: FormClient;

  const balance = async () =>
    (await t.request('GET', '/api/v1/dev/balance', { key: sk })).body.data.available as number;
  const payoutCount = async () =>
    Number(
      (
        await t.runtime.db
          .selectFrom('payouts')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('business_id', '=', business.id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const payoutRow = (reference: string) =>
    t.runtime.db.selectFrom('payouts').selectAll().where('reference', '=', reference).executeTakeFirstOrThrow();
  /** The fee plan below: 1.00 MRU plus 1 %, rounded up. */
  const feeOf = (amount: number) => 100 + Math.ceil((amount * 100) / 10_000);

  /** The review step for these fields, from the form as drawn. */
  async function review(client: FormClient, fields: Record<string, string>): Promise<Page> {
    const form = await client.get(`${PAYOUTS}/new`);
    assert.equal(form.status, 200, form.html.slice(0, 300));
    return client.post(REVIEW, { ...hiddenFields(form.html, REVIEW), ...fields });
  }

  /** Review, then Confirm: the payout's reference from where the confirmation goes. */
  async function sendPayout(client: FormClient, fields: Record<string, string>): Promise<string> {
    const reviewed = await review(client, fields);
    assert.equal(reviewed.status, 200, reviewed.html.slice(0, 500));
    const confirmed = await client.post(PAYOUTS, formFields(reviewed.html, PAYOUTS));
    assert.equal(confirmed.status, 303, confirmed.html.slice(0, 500));
    const reference = /^\/dashboard\/payouts\/(PO-[0-9]{16})\?notice=done$/.exec(confirmed.location ?? '')?.[1];
    assert.ok(reference, confirmed.location ?? '');
    return reference;
  }

  async function dryRun(client: FormClient, csv: string): Promise<Page> {
    const page = await client.get(BATCH);
    assert.equal(page.status, 200, page.html.slice(0, 300));
    return postMultipart(t, client, `${BATCH}/review`, hiddenFields(page.html, `${BATCH}/review`), {
      content: csv,
      filename: 'payouts.csv',
    });
  }

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    business = await t.createBusiness({ name: 'Payout shop' });
    sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 250, payerFee: 0, tofBps: 500, tteBps: 0 });
    expectStatus(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 100, payoutFeeBps: 100 }),
      200,
    );
    await earn(t, sk, 200_000);
    owner = (await signedIn(t, business.id)).client;
    viewer = (await signedIn(t, business.id, 'viewer')).client;
  });
  afterAll(() => t?.close());

  test('review shows the fee, total and balance after; confirm creates one payout, a replay none', async () => {
    const before = await balance();
    const count = await payoutCount();
    const phone = newPhone();
    const local = phone.slice(4);
    const spaced = `${local.slice(0, 2)} ${local.slice(2, 4)} ${local.slice(4, 6)} ${local.slice(6)}`;
    const reviewed = await review(owner, { amount: '150.50', phone: spaced, description: 'Rent <June>' });
    assert.equal(reviewed.status, 200, reviewed.html.slice(0, 500));
    const fee = feeOf(15_050);
    assert.equal(fee, 251);
    assert.deepEqual(
      ['review-phone', 'review-amount', 'review-fee', 'review-total', 'review-available', 'review-after'].map((id) =>
        textOf(reviewed.html, id),
      ),
      [phone, mru(15_050), mru(251), mru(15_050 + fee), mru(before), mru(before - 15_050 - fee)],
    );
    assert.match(reviewed.html, /Rent &lt;June&gt;/, 'escaped');
    assert.equal(await payoutCount(), count, 'the review writes nothing');

    const confirm = formFields(reviewed.html, PAYOUTS);
    const first = await owner.post(PAYOUTS, confirm);
    assert.equal(first.status, 303, first.html.slice(0, 500));
    const reference = /PO-[0-9]{16}/.exec(first.location ?? '')![0];
    assert.equal(first.location, `${PAYOUTS}/${reference}?notice=done`);
    assert.equal(await balance(), before - 15_050 - fee, 'amount and fee reserved');
    const row = await payoutRow(reference);
    assert.deepEqual(
      [row.amount, row.fee, row.destination_phone, row.description, row.status, row.environment],
      [15_050, fee, phone, 'Rent <June>', 'PENDING', 'test'],
    );

    const replay = await owner.post(PAYOUTS, confirm);
    assert.equal(replay.status, 303);
    assert.equal(replay.location, `${PAYOUTS}/${reference}?notice=already`, 'the repeat goes where the first went');
    assert.equal(await payoutCount(), count + 1, 'one payout');
    assert.equal(await balance(), before - 15_050 - fee, 'reserved once');

    const page = await owner.get(`${PAYOUTS}/${reference}`);
    assert.equal(page.status, 200);
    assert.equal(textOf(page.html, 'status'), 'Pending');
    assert.equal(textOf(page.html, 'fee'), mru(251));
    assert.equal(textOf(page.html, 'total-debited'), mru(15_050 + fee));
    assert.ok(page.html.includes(`action="${PAYOUTS}/${reference}/cancel"`), 'cancel is offered while PENDING');
  });

  test('an E.164 phone is kept as is; anything else is refused with the field named', async () => {
    const phone = newPhone();
    const reference = await sendPayout(owner, { amount: '10', phone });
    assert.equal((await payoutRow(reference)).destination_phone, phone);
    for (const bad of ['2000000', '200000011', '0022220000001', '+0222200000', 'phone']) {
      const refused = await review(owner, { amount: '10', phone: bad });
      assert.equal(refused.status, 400, bad);
      assert.match(refused.html, /id="phone-error"/, bad);
      assert.match(refused.html, /Check these fields: Destination phone\./, bad);
    }
  });

  test('a bad amount names the field and keeps every typed value; nothing is written', async () => {
    const count = await payoutCount();
    for (const [amount, message] of [
      ['12.345', /Enter an amount in MRU, such as 150 or 150\.50\./],
      ['abc', /Enter an amount in MRU/],
      ['0', /Enter an amount between 0\.01 MRU and /],
      ['', /Enter an amount in MRU/],
    ] as const) {
      const refused = await review(owner, { amount, phone: '20 00 00 01', description: 'Salaire "mai"' });
      assert.equal(refused.status, 400, amount);
      assert.match(textOf(refused.html, 'amount-error'), message, amount);
      assert.match(refused.html, /Check these fields: Amount \(MRU\)\./);
      assert.match(refused.html, new RegExp(`id="amount" name="amount" value="${amount.replace('.', '\\.')}"`));
      assert.match(refused.html, /id="phone" name="phone" value="20 00 00 01"/);
      assert.match(refused.html, /id="description" name="description" value="Salaire &quot;mai&quot;"/);
      assert.doesNotMatch(refused.html, /id="phone-error"/);
    }
    // The confirm step reads the fields again: a forged amount is refused the same way.
    const reviewed = await review(owner, { amount: '5', phone: '20000001' });
    const forged = await owner.post(PAYOUTS, { ...formFields(reviewed.html, PAYOUTS), amount: '-5' });
    assert.equal(forged.status, 400);
    assert.match(forged.html, /id="amount-error"/);
    assert.equal(await payoutCount(), count);
  });

  test('INSUFFICIENT_FUNDS: on review the form says so; at confirm the form comes back with the message', async () => {
    const available = await balance();
    const count = await payoutCount();
    const tooMuch = (available / 100).toFixed(2);
    const short = await review(owner, { amount: tooMuch, phone: '20000001' });
    assert.equal(short.status, 402, short.html.slice(0, 500));
    assert.match(short.html, /<p class="error" role="alert">Your available balance \([^)]+\) cannot cover this payout/);
    assert.match(short.html, new RegExp(`name="amount" value="${tooMuch.replace('.', '\\.')}"`));
    assert.doesNotMatch(short.html, /action="\/dashboard\/payouts"/, 'no confirm offered');

    // The balance moved between review and confirm: the write refuses, the form says why.
    const reviewed = await review(owner, { amount: '1', phone: '20000001', description: 'Late' });
    const confirm = formFields(reviewed.html, PAYOUTS);
    const back = await owner.post(PAYOUTS, { ...confirm, amount: tooMuch });
    // Drawn in the answer to the POST: the values never travel in a URL.
    assert.equal(back.status, 402);
    assert.equal(back.location, null);
    assert.match(back.html, /Your available balance no longer covers this payout and its fee\. Nothing was sent\./);
    assert.match(back.html, new RegExp(`name="amount" value="${tooMuch.replace('.', '\\.')}"`));
    assert.match(back.html, /name="phone" value="\+22220000001"/);
    assert.match(back.html, /name="description" value="Late"/);
    assert.equal(await payoutCount(), count);
    assert.equal(await balance(), available);
  });

  test('a link cannot fill in the form; the review’s Change button brings the values back by POST', async () => {
    // A link carrying a payout (an attacker's phone and amount) is refused, not drawn filled in.
    const linked = await owner.get(`${PAYOUTS}/new?amount=5000&phone=%2B22229999999&description=Refund`);
    assert.equal(linked.status, 400);
    assert.doesNotMatch(linked.html, /22229999999|value="5000"/);
    const plain = await owner.get(`${PAYOUTS}/new`);
    assert.match(plain.html, /id="amount" name="amount" value=""/);
    assert.match(plain.html, /id="phone" name="phone" value=""/);

    const reviewed = await review(owner, { amount: '12.50', phone: '20000012', description: 'Loyer "mai"' });
    assert.equal(reviewed.status, 200);
    const changed = await owner.post(`${PAYOUTS}/new`, formFields(reviewed.html, `${PAYOUTS}/new`));
    assert.equal(changed.status, 200);
    assert.match(changed.html, /id="amount" name="amount" value="12\.50"/);
    assert.match(changed.html, /id="phone" name="phone" value="\+22220000012"/);
    assert.match(changed.html, /id="description" name="description" value="Loyer &quot;mai&quot;"/);
    // Posted from elsewhere, without this session's CSRF token: refused.
    const forged = await owner.post(`${PAYOUTS}/new`, { amount: '5000', phone: '+22229999999' });
    assert.equal(forged.status, 403);
  });

  test('a viewer sees the list but no form, and every payout POST is 403', async () => {
    const reference = await sendPayout(owner, { amount: '2', phone: '20000002' });
    const list = await viewer.get(PAYOUTS);
    assert.equal(list.status, 200);
    assert.ok(listed(list.html).includes(reference));
    assert.doesNotMatch(list.html, /id="new-payout"|id="new-batch"/);
    assert.equal((await viewer.get(`${PAYOUTS}/new`)).status, 403);
    assert.equal((await viewer.get(BATCH)).status, 403);
    const page = await viewer.get(`${PAYOUTS}/${reference}`);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.html, /\/cancel"/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(list.html)![1]!;
    const count = await payoutCount();
    for (const [action, form] of [
      [REVIEW, { amount: '1', phone: '20000001' }],
      [PAYOUTS, { _idem: 'viewerToken0123456789', amount: '1', phone: '20000001' }],
      [`${PAYOUTS}/${reference}/cancel`, { _idem: 'viewerToken0123456790' }],
    ] as const) {
      const refused = await viewer.post(action, { _csrf: csrf, ...form });
      assert.equal(refused.status, 403, action);
      assert.match(refused.html, /Your role in this business does not allow this\./);
    }
    const batch = await postMultipart(
      t,
      viewer,
      `${BATCH}/review`,
      { _csrf: csrf },
      {
        content: 'phone,amount\n20000001,1\n',
        filename: 'p.csv',
      },
    );
    assert.equal(batch.status, 403);
    assert.equal(await payoutCount(), count);
    assert.equal((await payoutRow(reference)).status, 'PENDING');
  });

  test('without its CSRF token a confirm is refused and creates nothing', async () => {
    const count = await payoutCount();
    const reviewed = await review(owner, { amount: '3', phone: '20000003' });
    const { _csrf, ...withoutCsrf } = formFields(reviewed.html, PAYOUTS);
    assert.ok(_csrf);
    const refused = await owner.post(PAYOUTS, withoutCsrf);
    assert.equal(refused.status, 403);
    assert.match(refused.html, /This form expired or did not come from this dashboard/);
    const wrong = await owner.post(PAYOUTS, { ...withoutCsrf, _csrf: 'x'.repeat(43) });
    assert.equal(wrong.status, 403);
    assert.equal(await payoutCount(), count);
  });

  test('the list: newest first, each row with amount, fee, status and phone; filtered by status', async () => {
    const older = await sendPayout(owner, { amount: '4', phone: '20000004' });
    const newer = await sendPayout(owner, { amount: '5.25', phone: '20000005' });
    const list = await owner.get(PAYOUTS);
    assert.equal(list.status, 200);
    const rows = listed(list.html);
    assert.ok(rows.indexOf(newer) >= 0 && rows.indexOf(newer) < rows.indexOf(older), 'newest first');
    const row = list.html.slice(
      list.html.indexOf(`<tr id="${newer}"`),
      list.html.indexOf('</tr>', list.html.indexOf(`<tr id="${newer}"`)),
    );
    assert.match(row, /5\.25\sMRU/);
    assert.match(row, new RegExp(mru(feeOf(525)).replace('.', '\\.')));
    assert.match(row, /<span class="badge PENDING">Pending<\/span>/);
    assert.match(row, /\+22220000005/);
    assert.match(row, new RegExp(`href="/dashboard/payouts/${newer}"`));
    assert.match(list.html, /aria-current="page">Payouts</, 'the nav marks the page');

    await owner.submit(`${PAYOUTS}/${older}`, `${PAYOUTS}/${older}/cancel`);
    const cancelled = listed((await owner.get(`${PAYOUTS}?status=CANCELLED`)).html);
    assert.ok(cancelled.includes(older) && !cancelled.includes(newer));
    const pending = listed((await owner.get(`${PAYOUTS}?status=PENDING`)).html);
    assert.ok(pending.includes(newer) && !pending.includes(older));
    assert.equal((await owner.get(`${PAYOUTS}?status=LOST`)).status, 400);
  });

  test('the payout page lists the balance transactions it settles; sent, it is PAID without cancel', async () => {
    const intent = await earn(t, sk, 30_000);
    const reference = await sendPayout(owner, { amount: '20', phone: newPhone() });
    const page = await owner.get(`${PAYOUTS}/${reference}`);
    assert.equal(page.status, 200);
    const settled = page.html.slice(page.html.indexOf('id="settled"'));
    assert.match(settled, /data-type="payment"/);
    assert.match(settled, new RegExp(`href="/dashboard/payments/${intent}"`));
    assert.match(settled, />Payment</);
    assert.ok((await sendDuePayouts(t.runtime.db)) >= 1);
    const paid = await owner.get(`${PAYOUTS}/${reference}`);
    assert.equal(textOf(paid.html, 'status'), 'Paid');
    assert.match(paid.html, /id="paid-at"/);
    assert.doesNotMatch(paid.html, /\/cancel"/);
    // A payout of another business is not found.
    const stranger = await t.createBusiness();
    const theirs = (await signedIn(t, stranger.id)).client;
    assert.equal((await theirs.get(`${PAYOUTS}/${reference}`)).status, 404);
  });

  test('a failed payout shows its failure code in words', async () => {
    const reference = await sendPayout(owner, { amount: '6', phone: '+22220001313' });
    await sendDuePayouts(t.runtime.db);
    const page = await owner.get(`${PAYOUTS}/${reference}`);
    assert.equal(textOf(page.html, 'status'), 'Failed');
    // The reason in words; its code only as the tooltip (no English code on a French or Arabic page).
    assert.match(
      page.html,
      /<dd id="failure" data-code="WALLET_NOT_FOUND" title="WALLET_NOT_FOUND">No wallet has this phone number\./,
    );
    // What was debited came back, and the page says so.
    assert.equal(textOf(page.html, 'returned'), formatPageAmount(600 + feeOf(600), 'en', 'always'));
  });

  test('cancel gives the money back once; a second cancel says why it cannot', async () => {
    const before = await balance();
    const reference = await sendPayout(owner, { amount: '7', phone: '20000007' });
    assert.equal(await balance(), before - 700 - feeOf(700));
    const path = `${PAYOUTS}/${reference}`;
    const form = hiddenFields((await owner.get(path)).html, `${path}/cancel`);
    const answers = [await owner.post(`${path}/cancel`, form), await owner.post(`${path}/cancel`, form)];
    assert.deepEqual(
      answers.map((answer) => answer.location),
      [`${path}?notice=done`, `${path}?notice=already`],
    );
    assert.equal(await balance(), before, 'amount and fee back');
    const page = await owner.get(path);
    assert.equal(textOf(page.html, 'status'), 'Cancelled');
    assert.match(page.html, /id="cancelled-at"/);
    const again = await owner.post(`${path}/cancel`, { ...form, _idem: 'anotherToken0123456789' });
    assert.equal(again.location, `${path}?error=PAYOUT_NOT_PENDING`);
    assert.match((await owner.get(again.location!)).html, /only a pending payout can be cancelled/);
  });

  test('a batch dry run names every bad line with its number and creates nothing', async () => {
    const count = await payoutCount();
    const csv = [
      'phone,amount,description',
      '20000011,10,Good',
      '1234,10,Short phone',
      '',
      '20000012,abc,Bad amount',
      '+22220000013,0,Zero',
      '20000014,10',
      `20000015,10,${'x'.repeat(201)}`,
      '"20 00 00 16","12.50","Quoted, fine"',
    ].join('\n');
    const report = await dryRun(owner, csv);
    assert.equal(report.status, 200, report.html.slice(0, 500));
    const lines = [...report.html.matchAll(/<tr data-line="(\d+)"><td class="num">\d+<\/td><td>([^<]*)<\/td>/g)].map(
      (match) => [Number(match[1]), match[2]!],
    );
    assert.deepEqual(
      lines.map(([line]) => line),
      [3, 5, 6, 7, 8],
    );
    assert.match(lines[0]![1] as string, /^Bad phone &quot;1234&quot;/);
    assert.match(lines[1]![1] as string, /^Bad amount &quot;abc&quot;/);
    assert.match(lines[2]![1] as string, /^Bad amount &quot;0&quot;: it must be between/);
    assert.match(lines[3]![1] as string, /2 cells/);
    assert.match(lines[4]![1] as string, /longer than 200 characters/);
    assert.equal(textOf(report.html, 'batch-lines'), '7');
    assert.equal(textOf(report.html, 'batch-count'), '2', 'the valid lines are totalled');
    assert.equal(textOf(report.html, 'batch-amount'), mru(2_250));
    assert.equal(textOf(report.html, 'batch-fees'), mru(feeOf(1_000) + feeOf(1_250)));
    assert.doesNotMatch(report.html, /id="confirm-batch"/, 'no confirm while a line is bad');
    assert.equal(await payoutCount(), count);

    const tooMany = ['phone,amount', ...Array.from({ length: 1_002 }, () => '20000011,1')].join('\n');
    const over = await dryRun(owner, tooMany);
    assert.match(
      over.html,
      /<tr data-line="1002"><td class="num">1002<\/td><td>Too many lines: a batch holds at most 1000 payouts and this file has 1002\./,
    );
    assert.doesNotMatch(over.html, /id="confirm-batch"/);

    for (const [content, message] of [
      ['amount,phone,colour\n1,20000001,red\n', /The first line must be the header phone,amount,description/],
      ['20000001,10,No header\n', /The first line must be the header/],
      ['phone,amount\n', /The file has no payouts/],
      ['phone,amount\n"20000001,10\n', /cannot be read as CSV \(line \d+\)/],
    ] as const) {
      const refused = await dryRun(owner, content);
      assert.equal(refused.status, 400, content);
      assert.match(refused.html, message);
    }
    const missing = await postMultipart(
      t,
      owner,
      `${BATCH}/review`,
      hiddenFields((await owner.get(BATCH)).html, `${BATCH}/review`),
    );
    assert.equal(missing.status, 400);
    assert.match(missing.html, /Choose a CSV file\./);
    assert.equal(await payoutCount(), count);
  });

  test('a batch confirm creates its payouts once, under one key; a changed batch is refused', async () => {
    const before = await balance();
    const count = await payoutCount();
    const csv = 'phone,amount,description\n20000021,10,One\n"20 00 00 22",20.5,Two\n+22220000023,30,\n';
    const report = await dryRun(owner, csv);
    assert.equal(report.status, 200, report.html.slice(0, 500));
    const fees = feeOf(1_000) + feeOf(2_050) + feeOf(3_000);
    assert.deepEqual(
      ['batch-count', 'batch-amount', 'batch-fees', 'batch-total', 'batch-after'].map((id) => textOf(report.html, id)),
      ['3', mru(6_050), mru(fees), mru(6_050 + fees), mru(before - 6_050 - fees)],
    );
    assert.match(report.html, /id="confirm-batch">Confirm 3 payouts</);
    const confirm = hiddenFields(report.html, BATCH);

    // Items changed in the page, resealed by nobody: refused, nothing created.
    const forged = JSON.parse(Buffer.from(confirm.batch!, 'base64url').toString('utf8')) as { items: unknown[][] };
    forged.items[0]![1] = 1;
    const tampered = await postMultipart(t, owner, BATCH, {
      ...confirm,
      _idem: 'forgedBatch0123456789',
      batch: Buffer.from(JSON.stringify(forged)).toString('base64url'),
    });
    assert.equal(tampered.status, 303);
    assert.equal(tampered.location, `${BATCH}?error=VALIDATION_ERROR`);
    assert.match((await owner.get(tampered.location!)).html, /The checked batch could not be read back/);
    assert.equal(await payoutCount(), count);

    const answers = [await postMultipart(t, owner, BATCH, confirm), await postMultipart(t, owner, BATCH, confirm)];
    assert.equal(answers[0]!.status, 303, answers[0]!.html.slice(0, 500));
    const id = /batch=(pob_[0-9A-Za-z]+)&notice=done$/.exec(answers[0]!.location ?? '')?.[1];
    assert.ok(id, answers[0]!.location ?? '');
    assert.equal(answers[1]!.location, `${PAYOUTS}?batch=${id}&notice=already`);
    assert.equal(await payoutCount(), count + 3, 'three payouts, once');
    assert.equal(await balance(), before - 6_050 - fees);

    const list = await owner.get(`${PAYOUTS}?batch=${id}`);
    assert.equal(list.status, 200);
    assert.equal(listed(list.html).length, 3);
    assert.equal(textOf(list.html, 'batch-count'), '3');
    assert.equal(textOf(list.html, 'batch-total'), mru(6_050 + fees));
    const rows = await t.runtime.db
      .selectFrom('payouts')
      .select(['destination_phone', 'amount', 'description'])
      .where('batch_id', '=', id)
      .orderBy('batch_index')
      .execute();
    assert.deepEqual(
      rows.map((row) => [row.destination_phone, row.amount, row.description]),
      [
        ['+22220000021', 1_000, 'One'],
        ['+22220000022', 2_050, 'Two'],
        ['+22220000023', 3_000, ''],
      ],
    );
    const [first] = listed(list.html);
    assert.match(
      (await owner.get(`${PAYOUTS}/${first}`)).html,
      new RegExp(`id="batch" href="/dashboard/payouts\\?batch=${id}"`),
    );
  });

  test('a checked batch is confirmed once: another `_idem` goes to the batch made; an old seal is refused', async () => {
    const count = await payoutCount();
    const report = await dryRun(owner, 'phone,amount\n20000041,1\n20000042,2\n');
    const confirm = hiddenFields(report.html, BATCH);
    const first = await postMultipart(t, owner, BATCH, confirm);
    const id = /batch=(pob_[0-9A-Za-z]+)&notice=done$/.exec(first.location ?? '')?.[1];
    assert.ok(id, first.location ?? first.html.slice(0, 300));
    // The same seal from a form drawn with another token (or a forged one): no second batch.
    for (const token of ['anotherFormToken0123', 'yetAnotherToken98765']) {
      const again = await postMultipart(t, owner, BATCH, { ...confirm, _idem: token });
      assert.equal(again.status, 303);
      assert.equal(again.location, `${PAYOUTS}?batch=${id}&notice=already`);
    }
    assert.equal(await payoutCount(), count + 2, 'one batch of two');

    // A seal made more than an hour ago, signed as this session's would be, is refused.
    const session = [...owner.cookies].find(([name]) => name.endsWith('dashboard_session'))![1];
    const old = sealBatch(
      [{ amount: 100, destination: { type: 'WALLET', phone: '+22220000043' } }],
      { secret: hashToken(session), businessId: business.id, environment: 'test' },
      Math.floor(Date.now() / 1000) - SEAL_MAX_AGE_SECONDS - 60,
    );
    const stale = await postMultipart(t, owner, BATCH, { ...confirm, ...old, _idem: 'staleSealToken012345' });
    assert.equal(stale.location, `${BATCH}?error=VALIDATION_ERROR`);
    const fresh = sealBatch([{ amount: 100, destination: { type: 'WALLET', phone: '+22220000043' } }], {
      secret: hashToken(session),
      businessId: business.id,
      environment: 'test',
    });
    const accepted = await postMultipart(t, owner, BATCH, { ...confirm, ...fresh, _idem: 'freshSealToken012345' });
    assert.match(accepted.location ?? '', /notice=done$/, 'the same seal made now is taken');
    assert.equal(await payoutCount(), count + 3);
  });

  test('a batch the balance cannot cover is not offered for confirmation', async () => {
    const available = await balance();
    const report = await dryRun(owner, `phone,amount\n20000031,${(available / 100).toFixed(2)}\n`);
    assert.equal(report.status, 200);
    assert.match(report.html, /cannot cover this payout and its fee/);
    assert.doesNotMatch(report.html, /id="confirm-batch"/);
  });

  test('the pages speak French', async () => {
    const reference = await sendPayout(owner, { amount: '8', phone: '20000008' });
    const list = await owner.get(PAYOUTS);
    await owner.post('/dashboard/preferences', {
      _csrf: /name="_csrf" value="([^"]+)"/.exec(list.html)![1]!,
      lang: 'fr',
      back: PAYOUTS,
    });
    const page = await owner.get(`${PAYOUTS}/${reference}`);
    assert.equal(textOf(page.html, 'status'), 'En attente');
    assert.match(page.html, /Annuler ce versement/);
    assert.match((await owner.get(PAYOUTS)).html, /aria-current="page">Versements</);
    const refused = await review(owner, { amount: 'x', phone: '1' });
    assert.match(refused.html, /Vérifiez ces champs : Montant \(MRU\), Téléphone du destinataire\./);
  });

  test('the ledger holds after every movement above', async () => {
    await fold(t);
    await assertLedgerSound(t);
  });
});
