import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { SANDBOX_FAILING_AMOUNT } from '../../src/modules/sandbox/sandbox.js';
import { act, ageIntent, createIntent } from '../intents/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { signedIn, type FormClient } from './support.js';

/** The actions a payment's page offers an owner, read from its forms and buttons. */
async function offered(client: FormClient, reference: string) {
  const path = `/dashboard/payments/${reference}`;
  const page = await client.get(path);
  assert.equal(page.status, 200, page.html.slice(0, 500));
  return {
    qr: page.html.includes('id="qr"'),
    cancel: page.html.includes(`action="${path}/cancel"`),
    pay: page.html.includes('name="outcome" value="success"'),
    fail: page.html.includes('name="outcome" value="failure"'),
    expire: page.html.includes('name="outcome" value="expire"'),
    refund: page.html.includes(`action="${path}/refund"`),
  };
}

const nothing = { qr: false, cancel: false, pay: false, fail: false, expire: false, refund: false };
/** PENDING and FAILED: the code (QR) and every simulation. */
const payable = { ...nothing, qr: true, pay: true, fail: true, expire: true };

describe('a payment page offers what the intent state table allows', () => {
  let t: TestApp;
  let business: TestBusiness;
  let owner: FormClient;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t.close());

  test('PENDING: the QR code, cancel, and every simulation', async () => {
    const intent = await createIntent(t, business.keys.secretTest, { amount: 3_000 });
    assert.deepEqual(await offered(owner, intent.referenceNumber), { ...payable, cancel: true });
  });

  test('past its expiry, before the job ran: no payment is offered or taken (issue 33 guards)', async () => {
    const sk = business.keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 3_000 });
    await ageIntent(t, intent.referenceNumber);
    assert.deepEqual(await offered(owner, intent.referenceNumber), { ...nothing, cancel: true, expire: true });
    const path = `/dashboard/payments/${intent.referenceNumber}`;
    const posted = await owner.submit(path, `${path}/simulate`, { outcome: 'success' });
    assert.notEqual(posted.status, 500, posted.html.slice(0, 500));
    const refused = await act(t, sk, intent.referenceNumber, 'simulate');
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error.code, 'INTENT_NOT_PENDING');
    assert.match(refused.body.error.message, /expired/);
    const stored = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk });
    assert.equal(stored.body.data.status, 'PENDING', 'nothing was paid');
  });

  test('FAILED is still payable: the QR code and the simulations stay, cancel does not apply', async () => {
    const sk = business.keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 3_000 });
    const failed = await act(t, sk, intent.referenceNumber, 'simulate', { outcome: 'failure' });
    expectStatus(failed, 200);
    assert.equal(failed.body.data.status, 'FAILED');
    assert.deepEqual(await offered(owner, intent.referenceNumber), payable);
    // The page says why, in its own words: the attempt's typed code, never the API's message.
    const path = `/dashboard/payments/${intent.referenceNumber}`;
    const page = await owner.get(path);
    assert.match(page.html, /<dd id="last-failure">A simulated failure<\/dd>/);
    // The page's own form pays it.
    const paid = await owner.submit(path, `${path}/simulate`, { outcome: 'success' });
    assert.equal(paid.status, 303, paid.html.slice(0, 500));
    const after = await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk });
    assert.equal(after.body.data.status, 'PAID');
    assert.deepEqual(await offered(owner, intent.referenceNumber), { ...nothing, refund: true });
    assert.doesNotMatch((await owner.get(path)).html, /id="last-failure"/, 'a success clears the last failure');
  });

  test('the last failure is stored as its code: a wallet too poor, then the sandbox failing amount', async () => {
    const sk = business.keys.secretTest;
    const poor = await createIntent(t, sk, { amount: 3_000 });
    const wallet = '+22245000001';
    expectStatus(
      await t.admin('POST', '/wallets', { phone: wallet, pin: '2580', balance: 100, environment: 'test' }),
      201,
    );
    const refused = await t.request('POST', `/checkout/intents/${poor.shortCode}/pay`, {
      body: { phone: wallet, pin: '2580' },
    });
    assert.equal(refused.status, 402, refused.text);
    const declined = await createIntent(t, sk, { amount: SANDBOX_FAILING_AMOUNT });
    expectStatus(await act(t, sk, declined.referenceNumber, 'simulate', { outcome: 'success' }), 200);
    const rows = await t.runtime.db
      .selectFrom('payment_intents')
      .select(['reference_number', 'last_failure'])
      .where('reference_number', 'in', [poor.referenceNumber, declined.referenceNumber])
      .execute();
    assert.deepEqual(Object.fromEntries(rows.map((row) => [row.reference_number, row.last_failure])), {
      [poor.referenceNumber]: 'INSUFFICIENT_BALANCE',
      [declined.referenceNumber]: 'SANDBOX_DECLINED',
    });
    const page = await owner.get(`/dashboard/payments/${poor.referenceNumber}`);
    assert.match(page.html, /<dd id="last-failure">The payer&#39;s balance was too low<\/dd>/);
  });

  test('migration 023 turns the failure texts stored before it into their codes', async () => {
    const sk = business.keys.secretTest;
    const texts = [
      ['Insufficient balance.', 'INSUFFICIENT_BALANCE'],
      ['The sandbox amount 1313 always fails.', 'SANDBOX_DECLINED'],
      ['Simulated payment failure.', 'SIMULATED_FAILURE'],
      ['A text no version wrote.', 'A text no version wrote.'],
    ] as const;
    const references: string[] = [];
    for (const [text] of texts) {
      const intent = await createIntent(t, sk, { amount: 3_000 });
      await t.runtime.db
        .updateTable('payment_intents')
        .set({ status: 'FAILED', last_failure: text as never })
        .where('reference_number', '=', intent.referenceNumber)
        .execute();
      references.push(intent.referenceNumber);
    }
    await sql.raw(readFileSync('src/db/migrations/023_last_failure_code.sql', 'utf8')).execute(t.runtime.db);
    const rows = await t.runtime.db
      .selectFrom('payment_intents')
      .select(['reference_number', 'last_failure'])
      .where('reference_number', 'in', references)
      .execute();
    assert.deepEqual(
      references.map((reference) => rows.find((row) => row.reference_number === reference)?.last_failure),
      texts.map(([, code]) => code),
    );
    const declined = await owner.get(`/dashboard/payments/${references[1]}`);
    assert.match(declined.html, /<dd id="last-failure">The sandbox amount that always fails<\/dd>/);
    // A text the page has no words for is not shown (nor is "undefined").
    const unknown = await owner.get(`/dashboard/payments/${references[3]}`);
    assert.equal(unknown.status, 200);
    assert.doesNotMatch(unknown.html, /id="last-failure"|undefined/);
  });

  test('CANCELLED: nothing to do', async () => {
    const sk = business.keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 3_000 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'cancel'), 200);
    assert.deepEqual(await offered(owner, intent.referenceNumber), nothing);
  });
});
