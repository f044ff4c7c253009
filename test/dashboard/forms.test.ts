import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { freshPhone, simulate } from '../orders/support.js';
import { createProduct } from '../products/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { FormClient, PASSWORD, signedIn, type Page } from './support.js';

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

function refusedForm(page: Page, status = 400) {
  assert.equal(page.status, status, page.html.slice(0, 400));
  assert.equal(page.location, null, 'drawn again, not redirected');
  assert.match(page.html, /role="alert">The form was not saved: check the fields marked below\.</);
}

describe('dashboard forms fail on the field that caused it and keep what was typed', () => {
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
    business = await t.createBusiness({ approveLive: false });
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t?.close());

  test('one-time payment: a bad amount is refused on the amount, the label and metadata are kept', async () => {
    const NEW = '/dashboard/payments/new';
    const typed = { amountType: 'FIXED', amount: '12,5x', label: 'Donation <Ramadan>', metadata: 'order=17' };
    const refused = await owner.submit(NEW, '/dashboard/payments', typed);
    refusedForm(refused);
    assert.equal(fieldError(refused.html, 'amount'), 'Enter an amount in MRU, such as 250 or 250.50.');
    assert.equal(fieldError(refused.html, 'label'), undefined);
    assert.equal(valueOf(refused.html, 'amount'), '12,5x');
    assert.equal(valueOf(refused.html, 'label'), 'Donation &lt;Ramadan&gt;');
    assert.equal(valueOf(refused.html, 'metadata'), 'order=17');
    const badMetadata = await owner.submit(NEW, '/dashboard/payments', {
      ...typed,
      amount: '12.50',
      metadata: 'no equals sign',
    });
    refusedForm(badMetadata);
    assert.equal(fieldError(badMetadata.html, 'metadata'), 'Write one key=value per line.');
    assert.equal(fieldError(badMetadata.html, 'amount'), undefined);
    const tooLarge = await owner.submit(NEW, '/dashboard/payments', { ...typed, amount: '999999999' });
    assert.ok(tooLarge.status >= 400 && tooLarge.status < 500, String(tooLarge.status));
    assert.equal(fieldError(tooLarge.html, 'amount'), 'This amount is outside the allowed range.');
    const missing = await owner.submit(NEW, '/dashboard/payments', { ...typed, amount: '' });
    assert.equal(fieldError(missing.html, 'amount'), 'Fill in this field.');
    const created = await owner.submit(NEW, '/dashboard/payments', { ...typed, amount: '12.50' });
    assert.equal(created.status, 303);
    assert.match(created.location ?? '', /^\/dashboard\/payments\/PI-/);
  });

  test('order modification: a picker of the shop’s products and variants; a bad quantity is refused on its row', async () => {
    const sk = business.keys.secretTest;
    const tea = await createProduct(t, sk, { name: 'Thé', price: 500, status: 'ACTIVE', quantity: 100 });
    const couscous = await createProduct(t, sk, {
      name: 'Couscous',
      price: 1_000,
      status: 'ACTIVE',
      variants: [{ type: 'SIZE', label: 'Large', priceAdjustment: 700, quantity: 50 }],
    });
    await createProduct(t, sk, { name: 'Hidden', price: 100, status: 'DISABLED' });
    const variantId = couscous.variants[0]._id as string;
    const order = await simulate(t, sk, [{ productId: tea.id, quantity: 1 }], freshPhone());
    expectStatus(order, 201);
    const path = `/dashboard/orders/${order.body.data.referenceNumber}`;
    const page = await owner.get(path);
    const picker = /<select id="pick-1"[\s\S]*?<\/select>/.exec(page.html)?.[0] ?? '';
    assert.match(picker, new RegExp(`<option value="${tea.id}">Thé — 5\\.00\u00a0MRU</option>`));
    assert.match(
      picker,
      new RegExp(`<option value="${couscous.id}~${variantId}">Couscous · Large — 17\\.00\u00a0MRU</option>`),
    );
    assert.doesNotMatch(picker, /Hidden/, 'only products on sale');
    assert.doesNotMatch(page.html, /placeholder="Product id/);

    const pick = `${couscous.id}~${variantId}`;
    const typed = {
      productId: [tea.id, pick, ''],
      variantId: ['', '', ''],
      optionIds: ['', '', ''],
      quantity: ['1', 'lots', ''],
    };
    const refused = await owner.submit(path, `${path}/propose-modification`, typed);
    refusedForm(refused);
    assert.equal(fieldError(refused.html, 'quantity-1'), 'Enter a whole number from 1 to 1000.');
    assert.equal(fieldError(refused.html, 'quantity-0'), undefined);
    assert.equal(valueOf(refused.html, 'quantity-1'), 'lots');
    assert.match(refused.html, new RegExp(`<option value="${pick}" selected>`), 'the pick is kept');

    const proposed = await owner.submit(path, `${path}/propose-modification`, { ...typed, quantity: ['1', '2', ''] });
    assert.equal(proposed.location, `${path}?notice=done`);
    const row = await t.runtime.db
      .selectFrom('orders')
      .select('proposed_modification')
      .where('reference_number', '=', order.body.data.referenceNumber)
      .executeTakeFirstOrThrow();
    // 1 × 5.00 + 2 × (10.00 + 7.00).
    assert.equal(row.proposed_modification?.totalAmount, 3_900);
  });

  test('a user changes their own password: each refusal on its field, nothing typed drawn back; other sessions end', async () => {
    const { client, user } = await signedIn(t, business.id, 'viewer');
    const elsewhere = new FormClient(t);
    assert.equal((await elsewhere.signIn(user.email, PASSWORD)).status, 303);
    const SETTINGS = '/dashboard/settings';
    const ACTION = `${SETTINGS}/password`;
    const fresh = 'a much longer passphrase';

    const wrong = await client.submit(SETTINGS, ACTION, { current: 'not it at all', password: fresh, again: fresh });
    refusedForm(wrong);
    assert.equal(fieldError(wrong.html, 'current-password'), 'This is not your current password.');
    assert.equal(fieldError(wrong.html, 'new-password'), undefined);
    assert.ok(!wrong.html.includes('not it at all') && !wrong.html.includes(fresh), 'no password is drawn back');
    const short = await client.submit(SETTINGS, ACTION, { current: PASSWORD, password: 'short', again: 'short' });
    assert.equal(fieldError(short.html, 'new-password'), 'Use from 12 to 200 characters.');
    const differ = await client.submit(SETTINGS, ACTION, { current: PASSWORD, password: fresh, again: `${fresh}!` });
    assert.equal(fieldError(differ.html, 'new-password-again'), 'The two new passwords are not the same.');
    assert.equal((await elsewhere.get('/dashboard')).status, 200, 'a refusal changes nothing');

    const changed = await client.submit(SETTINGS, ACTION, { current: PASSWORD, password: fresh, again: fresh });
    assert.equal(changed.location, `${SETTINGS}?notice=done`);
    assert.equal((await client.get('/dashboard')).status, 200, 'this session stays signed in');
    assert.equal((await elsewhere.get('/dashboard')).status, 303, 'the other session ended');
    assert.equal(
      (await new FormClient(t).signIn(user.email, PASSWORD)).status,
      401,
      'the old password no longer signs in',
    );
    assert.equal((await new FormClient(t).signIn(user.email, fresh)).status, 303);
  });
});
