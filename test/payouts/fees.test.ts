import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { formatAmount } from '../../src/lib/i18n.js';
import { hiddenFields, signedIn, type FormClient } from '../dashboard/support.js';
import { assertBalanceExplained, assertLedgerSound, fold } from '../payments/support.js';
import { multipartBody } from '../support/multipart.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { createPayout, earn, newPhone, PAYOUTS, payoutTo, sendPayouts } from './support.js';

const mru = (centimes: number) => formatAmount(centimes, 'en');

/** The text of the element with this id, tags stripped. */
function textOf(html: string, id: string): string {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(dd|span|p|td|strong)>`).exec(html);
  assert(match, `no element #${id}`);
  return match[1]!.replace(/<[^>]+>/g, '').trim();
}

/**
 * Issue 47 item 5: a payout fee with a percentage part is rounded up, so it is never 0 on a small
 * payout and a batch of small payouts never pays less than the same amount paid out at once; the
 * dashboard's previews and the API's answers agree to the centime.
 */
describe('a percentage payout fee is rounded up', () => {
  let t: TestApp;
  let sk: string;
  let owner: FormClient;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000', DASHBOARD_LOGIN_PER_MINUTE_IP: '1000' } });
    const business = await t.createBusiness({ name: 'Percentage fee shop' });
    sk = business.keys.secretTest;
    // 0.5 %, no flat part.
    expectStatus(await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 0, payoutFeeBps: 50 }), 200);
    await earn(t, sk, 5_000_000);
    owner = (await signedIn(t, business.id)).client;
  });
  afterAll(() => t.close());

  test('0.99 MRU pays 0.01; 990 MRU pays 4.95; 1,000 × 0.99 MRU in a batch pay 10.00, never less than at once', async () => {
    const small = await createPayout(t, sk, payoutTo(newPhone(), 99));
    expectStatus(small, 201);
    assert.deepEqual([small.body.data.fee, small.body.data.totalDebited], [1, 100]);
    const whole = await createPayout(t, sk, payoutTo(newPhone(), 99_000));
    assert.equal(whole.body.data.fee, 495);
    // A fraction of a centime is rounded up, not to the nearest: 101 × 0.5 % = 0.505.
    assert.equal((await createPayout(t, sk, payoutTo(newPhone(), 101))).body.data.fee, 1);
    assert.equal((await createPayout(t, sk, payoutTo(newPhone(), 301))).body.data.fee, 2);

    const items = Array.from({ length: 1000 }, (_, i) => payoutTo(`+2226${String(i).padStart(7, '0')}`, 99));
    const batch = await t.request('POST', `${PAYOUTS}/batches`, { key: sk, body: { items }, idempotencyKey: true });
    expectStatus(batch, 201);
    assert.equal(batch.body.data.totalFee, 1_000);
    assert.ok(batch.body.data.totalFee >= whole.body.data.fee, 'split, the same amount pays no less');
    assert.ok(batch.body.data.payouts.every((payout: { fee: number }) => payout.fee === 1));

    // The dashboard previews what the API charges: the single payout's review, the batch's dry run.
    const form = await owner.get('/dashboard/payouts/new');
    const review = await owner.post('/dashboard/payouts/review', {
      ...hiddenFields(form.html, '/dashboard/payouts/review'),
      amount: '0.99',
      phone: '20000001',
    });
    assert.equal(review.status, 200, review.html.slice(0, 300));
    assert.equal(textOf(review.html, 'review-fee'), mru(small.body.data.fee));
    const wholeReview = await owner.post('/dashboard/payouts/review', {
      ...hiddenFields(form.html, '/dashboard/payouts/review'),
      amount: '990',
      phone: '20000001',
    });
    assert.equal(textOf(wholeReview.html, 'review-fee'), mru(whole.body.data.fee));
    const batchPage = await owner.get('/dashboard/payouts/batch');
    const csv = ['phone,amount', ...items.map((item) => `${item.destination.phone},0.99`)].join('\n');
    const { body, contentType } = multipartBody([
      ...Object.entries(hiddenFields(batchPage.html, '/dashboard/payouts/batch/review')).map(([field, content]) => ({
        field,
        content,
      })),
      { field: 'file', filename: 'payouts.csv', contentType: 'text/csv', content: csv },
    ]);
    const dryRun = await fetch(`${t.baseUrl}/dashboard/payouts/batch/review`, {
      method: 'POST',
      headers: { 'content-type': contentType, cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      body,
    });
    const report = await dryRun.text();
    assert.equal(dryRun.status, 200, report.slice(0, 300));
    assert.equal(textOf(report, 'batch-fees'), mru(batch.body.data.totalFee));

    while ((await sendPayouts(t)) > 0);
    await fold(t);
    await assertLedgerSound(t);
    await assertBalanceExplained(t, sk);
  });
});
