import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { Commerce, InvalidRequestError, NotFoundError, PermissionError } from '@commerce-developer-api/sdk';
import type { PaymentLink, PaymentLinkInput, WebhookEventName, WebhookEventOf } from '@commerce-developer-api/sdk';
import { SANDBOX_DEFAULT_PAYER, SANDBOX_WALLET_PIN } from '../../src/modules/sandbox/sandbox.js';
import { payLink } from '../links/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';

// Compile-time: payment_link.completed is part of the SDK's webhook event union (from the OpenAPI webhooks).
const COMPLETED: WebhookEventName = 'payment_link.completed';
type CompletedEvent = WebhookEventOf<'payment_link.completed'>;
const countOf = (event: CompletedEvent) => [event.data.reference_number, event.data.payments_count] as const;

const FIXED: PaymentLinkInput = { label: 'Couscous royal', amountType: 'FIXED', amount: 15_000 };

/** Issue 50 through the SDK: payment links, their list and the intents paid through them. */
describe('payment links through the SDK', () => {
  let t: TestApp;
  let business: TestBusiness;
  let commerce: Commerce;
  /** The URLs the SDK asked for, to see the pages an iteration fetched. */
  const requested: URL[] = [];
  /** The page numbers the SDK fetched of lists whose path ends with `suffix`, since `from`. */
  const pagesOf = (suffix: string, from: number) =>
    requested
      .slice(from)
      .filter((url) => url.pathname.endsWith(suffix))
      .map((url) => Number(url.searchParams.get('page')));
  const pay = async (link: PaymentLink, body: Record<string, unknown> = {}) => {
    const response = await payLink(t, link, { phone: SANDBOX_DEFAULT_PAYER, pin: SANDBOX_WALLET_PIN, ...body });
    expectStatus(response, 200);
    return response.body.data as { shortCode: string; state: string; receipt: { reference: string } | null };
  };

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'SDK links' });
    commerce = new Commerce(business.keys.secretTest, {
      baseUrl: t.baseUrl,
      fetch: (input, init) => {
        requested.push(new URL(String(input)));
        return checkedFetch(input, init);
      },
    });
  });
  afterAll(() => t.close());

  test('create: a PL- reference, its url and QR; retrieve answers the same; one key, one link', async () => {
    const link = await commerce.paymentLinks.create(
      { ...FIXED, maxPayments: 10, collect: { name: true }, metadata: { menu: 'friday' } },
      { idempotencyKey: 'sdk-link-once' },
    );
    assert.match(link.referenceNumber, /^PL-[0-9]{16}$/);
    assert.match(link.url, /\/l\/[^/]+$/);
    assert.equal(link.qrUrl, `${link.url}/qr.svg`);
    assert.deepEqual(
      [link.status, link.amountType, link.amount, link.maxPayments, link.paymentsCount, link.amountCollected],
      ['ACTIVE', 'FIXED', 15_000, 10, 0, 0],
    );
    assert.deepEqual(link.collect, { name: true, note: false });
    assert.deepEqual(link.metadata, { menu: 'friday' });
    assert.equal(link.sandbox, true);
    assert.deepEqual(await commerce.paymentLinks.retrieve(link.referenceNumber), link);

    const again = await commerce.paymentLinks.create(
      { ...FIXED, maxPayments: 10, collect: { name: true }, metadata: { menu: 'friday' } },
      { idempotencyKey: 'sdk-link-once' },
    );
    assert.deepEqual(again, link, 'the same key replays the first answer');
    const reused = await commerce.paymentLinks
      .create({ ...FIXED, amount: 15_001 }, { idempotencyKey: 'sdk-link-once' })
      .catch((error: unknown) => error);
    assert.ok(reused instanceof InvalidRequestError);
    assert.equal(reused.code, 'IDEMPOTENCY_KEY_REUSED');
  });

  test('bad input is InvalidRequestError VALIDATION_ERROR naming the field; unknown and live are typed too', async () => {
    const mixed = await commerce.paymentLinks
      .create({ label: 'Open tip', amountType: 'OPEN', amount: 1_000 })
      .catch((error: unknown) => error);
    assert.ok(mixed instanceof InvalidRequestError, String(mixed));
    assert.equal(mixed.code, 'VALIDATION_ERROR');
    assert.equal(mixed.statusCode, 400);
    assert.ok(
      mixed.details.some((detail) => detail.field.endsWith('amount')),
      JSON.stringify(mixed.details),
    );

    const missing = await commerce.paymentLinks.retrieve('PL-0000000000000000').catch((error: unknown) => error);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(missing.code, 'PAYMENT_LINK_NOT_FOUND');
    const link = await commerce.paymentLinks.create(FIXED);
    const live = new Commerce(business.keys.secretLive, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const mismatch = await live.paymentLinks.retrieve(link.referenceNumber).catch((error: unknown) => error);
    assert.ok(mismatch instanceof PermissionError);
    assert.equal(mismatch.code, 'SANDBOX_MISMATCH');
  });

  test('update: only the fields sent change; deactivate and reactivate; a PATCH is replayed by its key', async () => {
    const link = await commerce.paymentLinks.create({ ...FIXED, label: 'Before' });
    const renamed = await commerce.paymentLinks.update(link.referenceNumber, { label: 'After', metadata: { a: 'b' } });
    assert.equal(renamed.label, 'After');
    assert.deepEqual(renamed.metadata, { a: 'b' });
    assert.equal(renamed.amount, link.amount);

    const off = await commerce.paymentLinks.update(
      link.referenceNumber,
      { active: false, inactiveMessage: 'Sold out, thank you!' },
      { idempotencyKey: 'sdk-link-off' },
    );
    assert.deepEqual([off.status, off.active, off.inactiveMessage], ['INACTIVE', false, 'Sold out, thank you!']);
    const replayed = await commerce.paymentLinks.update(
      link.referenceNumber,
      { active: false, inactiveMessage: 'Sold out, thank you!' },
      { idempotencyKey: 'sdk-link-off' },
    );
    assert.deepEqual(replayed, off);
    const on = await commerce.paymentLinks.update(link.referenceNumber, { active: true });
    assert.deepEqual([on.status, on.active], ['ACTIVE', true]);

    const unknown = await commerce.paymentLinks
      .update('PL-0000000000000000', { active: false })
      .catch((error: unknown) => error);
    assert.ok(unknown instanceof NotFoundError);
    assert.equal(unknown.code, 'PAYMENT_LINK_NOT_FOUND');
  });

  test('list: one page newest first, and for await over every page with the status filter kept', async () => {
    for (const label of ['Paused', 'Paused too']) {
      const paused = await commerce.paymentLinks.create({ ...FIXED, label });
      await commerce.paymentLinks.update(paused.referenceNumber, { active: false });
    }

    const all = await commerce.paymentLinks.list({ limit: 100 });
    assert.ok(all.total >= 4);
    assert.equal(all.items.length, all.total);
    const times = all.items.map((item) => item.createdAt);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');

    let from = requested.length;
    const iterated: string[] = [];
    for await (const link of commerce.paymentLinks.list({ limit: 2 })) iterated.push(link.referenceNumber);
    assert.deepEqual(
      iterated,
      all.items.map((item) => item.referenceNumber),
    );
    assert.deepEqual(
      pagesOf('/payment-links', from),
      Array.from({ length: Math.ceil(all.total / 2) }, (_, index) => index + 1),
    );

    from = requested.length;
    const paused = await commerce.paymentLinks.list({ status: 'INACTIVE', limit: 1 }).toArray();
    assert.equal(paused.length, 2);
    assert.ok(paused.every((link) => link.status === 'INACTIVE'));
    assert.ok(requested.slice(from).every((url) => url.searchParams.get('status') === 'INACTIVE'));
    assert.deepEqual(
      pagesOf('/payment-links', from),
      paused.map((_, index) => index + 1),
    );
    assert.equal((await commerce.paymentLinks.list({ status: 'EXPIRED' })).total, 0);
  });

  test('intents: the intents paid through a link, newest first, page by page; each names its link', async () => {
    const link = await commerce.paymentLinks.create({
      label: 'Tip jar',
      amountType: 'OPEN',
      minAmount: 500,
      maxAmount: 50_000,
      collect: { name: true, note: true },
    });
    const paid = [];
    for (const [amount, name] of [
      [1_000, 'Aicha'],
      [2_500, 'Sidi'],
      [4_000, 'Mariem'],
    ] as const) {
      paid.push(await pay(link, { amount, name, note: `from ${name}` }));
    }
    assert.ok(paid.every((view) => view.state === 'PAID' && view.receipt));

    const from = requested.length;
    const intents = await commerce.paymentLinks.intents(link.referenceNumber, { limit: 1 }).toArray();
    assert.deepEqual(pagesOf('/intents', from), [1, 2, 3]);
    assert.deepEqual(
      intents.map((intent) => [intent.payment?.amountPaid, intent.payerName, intent.payerNote, intent.paymentLink]),
      [
        [4_000, 'Mariem', 'from Mariem', link.referenceNumber],
        [2_500, 'Sidi', 'from Sidi', link.referenceNumber],
        [1_000, 'Aicha', 'from Aicha', link.referenceNumber],
      ],
      'newest first',
    );
    assert.ok(intents.every((intent) => intent.status === 'PAID'));
    assert.deepEqual(
      intents.map((intent) => intent.referenceNumber),
      paid.map((view) => view.receipt!.reference).reverse(),
    );
    const one = await commerce.intents.retrieve(intents[0]!.referenceNumber);
    assert.equal(one.paymentLink, link.referenceNumber);

    const after = await commerce.paymentLinks.retrieve(link.referenceNumber);
    assert.deepEqual([after.paymentsCount, after.amountCollected], [3, 7_500]);
    const none = await commerce.paymentLinks.intents(link.referenceNumber, { page: 9 });
    assert.deepEqual([none.items.length, none.total, none.hasMore], [0, 3, false]);
    const unknown = await commerce.paymentLinks
      .intents('PL-0000000000000000')
      .then(undefined, (error: unknown) => error);
    assert.ok(unknown instanceof NotFoundError);
    assert.equal(unknown.code, 'PAYMENT_LINK_NOT_FOUND');
  });

  test('the last payment completes the link: status COMPLETED and a typed payment_link.completed event', async () => {
    const link = await commerce.paymentLinks.create({ ...FIXED, label: 'Last plate', maxPayments: 1 });
    await pay(link);
    const completed = await commerce.paymentLinks.retrieve(link.referenceNumber);
    assert.deepEqual([completed.status, completed.paymentsCount], ['COMPLETED', 1]);
    const page = await commerce.events.list({ object: link.referenceNumber, type: COMPLETED });
    assert.equal(page.items.length, 1);
    const event = page.items[0]!.payload as CompletedEvent;
    assert.equal(event.event, 'payment_link.completed');
    assert.deepEqual(countOf(event), [link.referenceNumber, 1]);
    assert.equal(event.data.status, 'COMPLETED');
    assert.deepEqual((await commerce.paymentLinks.list({ status: 'COMPLETED' })).total, 1);
  });
});
