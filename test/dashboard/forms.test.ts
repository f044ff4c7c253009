import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient, type Page } from './support.js';

/** The message drawn next to a field, by the input's aria-describedby. */
function fieldError(html: string, inputId: string): string | undefined {
  const input = new RegExp(`<(?:input|textarea|select)[^>]*id="${inputId}"[^>]*>`).exec(html)?.[0];
  assert(input, `no field #${inputId}`);
  const described = /aria-describedby="([^"]+)"/.exec(input)?.[1];
  if (!described || !/aria-invalid="true"/.test(input)) return undefined;
  return new RegExp(`id="${described}">([^<]*)<`).exec(html)?.[1];
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

  test('payment link: a bad amount is refused on the amount, the label and metadata are kept', async () => {
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
});
