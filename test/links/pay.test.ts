import assert from 'node:assert/strict';
import { afterAll, beforeAll, beforeEach, describe, test } from 'vitest';
import { manualClock } from '../support/clock.js';
import {
  expectError,
  expectStatus,
  startTestApp,
  waitUntil,
  type TestApp,
  type TestBusiness,
} from '../support/harness.js';
import { eventsOf, listEvents } from '../support/read-api.js';
import { act } from '../intents/support.js';
import {
  createLink,
  getLink,
  ledgerIsSound,
  LINKS,
  newWallet,
  patchLink,
  payerView,
  payLink,
  rowCounts,
  slugOf,
  walletBalance,
} from './support.js';

const MAX_AMOUNT = 100_000_000;

describe("paying a link: the payer's API and its rules (issue 50 items 1 and 2, Bad input)", () => {
  const clock = manualClock();
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  beforeAll(async () => {
    t = await startTestApp({ clock, config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Épicerie Ksar' });
    sk = business.keys.secretTest;
  });
  afterAll(() => t.close());
  // The payer API's per-address and per-wallet limits are the checkout's: each test starts a fresh minute.
  beforeEach(() => clock.advance(60_000));

  /** Asserts that `refused` wrote nothing and moved no money. */
  async function refusesWithNothingWritten(
    refused: () => Promise<unknown>,
    watch: { link: { referenceNumber: string }; phone?: string; key?: string },
  ) {
    const key = watch.key ?? sk;
    const before = {
      rows: await rowCounts(t),
      wallet: watch.phone ? await walletBalance(t, watch.phone) : null,
      link: await getLink(t, key, watch.link.referenceNumber),
    };
    await refused();
    const after = {
      rows: await rowCounts(t),
      wallet: watch.phone ? await walletBalance(t, watch.phone) : null,
      link: await getLink(t, key, watch.link.referenceNumber),
    };
    assert.deepEqual(after.rows, before.rows, 'no row written');
    assert.equal(after.wallet, before.wallet, 'nothing debited');
    assert.equal(after.link.paymentsCount, before.link.paymentsCount);
    assert.equal(after.link.amountCollected, before.link.amountCollected);
  }

  test("the payer's view of a link: what to pay and to whom, nothing of the merchant's", async () => {
    const link = await createLink(t, sk, {
      label: 'Thé vert',
      amountType: 'FIXED',
      amount: 3000,
      collect: { name: true },
      metadata: { internal: 'do-not-show' },
      successUrl: 'https://shop.example/merci',
    });
    const response = await payerView(t, link);
    expectStatus(response, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.deepEqual(response.body.data, {
      merchantName: 'Épicerie Ksar',
      label: 'Thé vert',
      amountType: 'FIXED',
      amount: 3000,
      minAmount: null,
      maxAmount: null,
      payerFee: 0,
      currency: 'MRU',
      collect: { name: true, note: false },
      status: 'ACTIVE',
      refusal: null,
      inactiveMessage: null,
      sandbox: true,
    });
    assert.ok(!response.text.includes('do-not-show'));
    assert.ok(!response.text.includes(link.referenceNumber));
    expectError(await t.request('GET', '/checkout/links/nope0000nope'), 404, 'PAYMENT_LINK_NOT_FOUND');
    expectError(
      await t.request('POST', '/checkout/links/nope0000nope/pay', {
        body: { phone: '+22220000001', pin: '1234' },
        idempotencyKey: true,
      }),
      404,
      'PAYMENT_LINK_NOT_FOUND',
    );
  });

  test('an anonymous visitor creates nothing: 60 views of a link write no row', async () => {
    const link = await createLink(t, sk, { label: 'Affiche', amountType: 'OPEN' });
    const before = await rowCounts(t);
    for (let i = 0; i < 60; i++) expectStatus(await payerView(t, link), 200);
    assert.deepEqual(await rowCounts(t), before);
    assert.equal((await getLink(t, sk, link.referenceNumber)).paymentsCount, 0);
  });

  test('a FIXED link: the payer pays its amount; one intent PAID, the link counts it, the ledger holds', async () => {
    const link = await createLink(t, sk, {
      label: 'Pain',
      amountType: 'FIXED',
      amount: 4500,
      successUrl: 'https://shop.example/ok',
    });
    const payer = await newWallet(t, 20_000);
    // An amount sent to a FIXED link is not the payer's to choose: the link's is paid.
    const response = await payLink(t, link, { ...payer, amount: 1 });
    expectStatus(response, 200);
    const view = response.body.data;
    assert.equal(view.state, 'PAID');
    assert.equal(view.amount, 4500);
    assert.equal(view.label, 'Pain');
    assert.equal(view.successUrl, 'https://shop.example/ok');
    assert.equal(view.merchantName, 'Épicerie Ksar');
    assert.match(view.receipt.reference, /^PI-\d{16}$/);
    assert.equal(view.receipt.amountPaid, 4500);
    assert.equal(await walletBalance(t, payer.phone), 15_500);
    const counted = await getLink(t, sk, link.referenceNumber);
    assert.equal(counted.paymentsCount, 1);
    assert.equal(counted.amountCollected, 4500);
    // The receipt page's API answers the paid intent by its short code.
    const receipt = await t.request('GET', `/checkout/intents/${view.shortCode}`);
    expectStatus(receipt, 200);
    assert.equal(receipt.body.data.state, 'PAID');
    const intent = await t.request('GET', `/api/v1/dev/intents/${view.receipt.reference}`, { key: sk });
    assert.equal(intent.body.data.status, 'PAID');
    assert.equal(intent.body.data.paymentLink, link.referenceNumber);
    assert.equal(intent.body.data.payment.amountPaid, 4500);
    await ledgerIsSound(t);
  });

  test('an OPEN link: the amount is required and within the link’s bounds and the intent limits', async () => {
    const link = await createLink(t, sk, { label: 'Don', amountType: 'OPEN', minAmount: 1000, maxAmount: 50_000 });
    const payer = await newWallet(t, 200_000);
    const watch = { link, phone: payer.phone };
    await refusesWithNothingWritten(async () => {
      const missing = await payLink(t, link, payer);
      expectError(missing, 400, 'VALIDATION_ERROR');
      assert.equal(missing.body.error.details[0].field, 'body.amount');
    }, watch);
    for (const amount of [999, 50_001, 0, -1, MAX_AMOUNT + 1]) {
      await refusesWithNothingWritten(
        async () => expectError(await payLink(t, link, { ...payer, amount }), 400, 'AMOUNT_OUT_OF_RANGE'),
        watch,
      );
    }
    await refusesWithNothingWritten(
      async () => expectError(await payLink(t, link, { ...payer, amount: 10.5 }), 400, 'VALIDATION_ERROR'),
      watch,
    );
    for (const amount of [1000, 50_000, 12_345]) expectStatus(await payLink(t, link, { ...payer, amount }), 200);
    assert.equal(await walletBalance(t, payer.phone), 200_000 - 63_345);
    const counted = await getLink(t, sk, link.referenceNumber);
    assert.equal(counted.paymentsCount, 3);
    assert.equal(counted.amountCollected, 63_345);

    // Without bounds, the intent limits are the bounds.
    const open = await createLink(t, sk, { label: 'Libre', amountType: 'OPEN' });
    expectError(await payLink(t, open, { ...payer, amount: MAX_AMOUNT + 1 }), 400, 'AMOUNT_OUT_OF_RANGE');
    expectStatus(await payLink(t, open, { ...payer, amount: 1 }), 200);
    await ledgerIsSound(t);
  });

  test("the payer's name when the link asks it, the note when offered; neither otherwise", async () => {
    const link = await createLink(t, sk, {
      label: 'Cours',
      amountType: 'FIXED',
      amount: 100,
      collect: { name: true, note: true },
    });
    const payer = await newWallet(t, 10_000);
    for (const name of [undefined, '', '   ']) {
      await refusesWithNothingWritten(
        async () => {
          const refused = await payLink(t, link, { ...payer, ...(name === undefined ? {} : { name }) });
          expectError(refused, 400, 'VALIDATION_ERROR');
          assert.equal(refused.body.error.details[0].field, 'body.name');
        },
        { link, phone: payer.phone },
      );
    }
    expectError(await payLink(t, link, { ...payer, name: 'x'.repeat(101) }), 400, 'VALIDATION_ERROR');
    expectError(await payLink(t, link, { ...payer, name: 'A', note: 'x'.repeat(501) }), 400, 'VALIDATION_ERROR');
    expectError(await payLink(t, link, { ...payer, name: 'A', tip: 5 }), 400, 'VALIDATION_ERROR');

    const named = await payLink(t, link, { ...payer, name: '  Khadijetou  ', note: ' Groupe B ' });
    expectStatus(named, 200);
    const intent = await t.request('GET', `/api/v1/dev/intents/${named.body.data.receipt.reference}`, { key: sk });
    assert.equal(intent.body.data.payerName, 'Khadijetou');
    assert.equal(intent.body.data.payerNote, 'Groupe B');
    // The note is offered, not required.
    const noNote = await payLink(t, link, { ...payer, name: 'Brahim' });
    expectStatus(noNote, 200);
    const bare = await t.request('GET', `/api/v1/dev/intents/${noNote.body.data.receipt.reference}`, { key: sk });
    assert.equal(bare.body.data.payerName, 'Brahim');
    assert.ok(!('payerNote' in bare.body.data));

    // A link that asks for neither keeps neither, whatever the payer sends.
    const silent = await createLink(t, sk, { label: 'Muet', amountType: 'FIXED', amount: 100 });
    const paid = await payLink(t, silent, { ...payer, name: 'Nom', note: 'Note' });
    expectStatus(paid, 200);
    const kept = await t.request('GET', `/api/v1/dev/intents/${paid.body.data.receipt.reference}`, { key: sk });
    assert.ok(!('payerName' in kept.body.data));
    assert.ok(!('payerNote' in kept.body.data));
  });

  test('PAYMENT_LINK_INACTIVE, then open again; PAYMENT_LINK_COMPLETED; PAYMENT_LINK_EXPIRED: nothing written', async () => {
    const payer = await newWallet(t, 100_000);

    const inactive = await createLink(t, sk, { label: 'Off', amountType: 'FIXED', amount: 500 });
    expectStatus(await patchLink(t, sk, inactive.referenceNumber, { active: false, inactiveMessage: 'Fermé' }), 200);
    await refusesWithNothingWritten(
      async () => expectError(await payLink(t, inactive, payer), 409, 'PAYMENT_LINK_INACTIVE'),
      { link: inactive, phone: payer.phone },
    );
    const offView = (await payerView(t, inactive)).body.data;
    assert.deepEqual(
      [offView.status, offView.refusal, offView.inactiveMessage],
      ['INACTIVE', 'PAYMENT_LINK_INACTIVE', 'Fermé'],
    );
    expectStatus(await patchLink(t, sk, inactive.referenceNumber, { active: true }), 200);
    expectStatus(await payLink(t, inactive, payer), 200);

    const limited = await createLink(t, sk, { label: 'Deux', amountType: 'FIXED', amount: 500, maxPayments: 2 });
    expectStatus(await payLink(t, limited, payer), 200);
    expectStatus(await payLink(t, limited, payer), 200);
    await refusesWithNothingWritten(
      async () => expectError(await payLink(t, limited, payer), 409, 'PAYMENT_LINK_COMPLETED'),
      { link: limited, phone: payer.phone },
    );
    const doneView = (await payerView(t, limited)).body.data;
    assert.deepEqual([doneView.status, doneView.refusal], ['COMPLETED', 'PAYMENT_LINK_COMPLETED']);
    // Raising the limit opens it again.
    expectStatus(await patchLink(t, sk, limited.referenceNumber, { maxPayments: 3 }), 200);
    expectStatus(await payLink(t, limited, payer), 200);
    expectError(await payLink(t, limited, payer), 409, 'PAYMENT_LINK_COMPLETED');

    const expiring = await createLink(t, sk, {
      label: 'Bientôt fini',
      amountType: 'FIXED',
      amount: 500,
      expiresAt: new Date(Date.now() + 1000).toISOString(),
    });
    await waitUntil(async () => (await payerView(t, expiring)).body.data.status === 'EXPIRED', 'the link to expire');
    await refusesWithNothingWritten(
      async () => expectError(await payLink(t, expiring, payer), 409, 'PAYMENT_LINK_EXPIRED'),
      { link: expiring, phone: payer.phone },
    );
    assert.equal((await payerView(t, expiring)).body.data.refusal, 'PAYMENT_LINK_EXPIRED');
    // Moving the expiry opens it again.
    expectStatus(await patchLink(t, sk, expiring.referenceNumber, { expiresAt: null }), 200);
    expectStatus(await payLink(t, expiring, payer), 200);
    await ledgerIsSound(t);
  });

  test('a wrong PIN: INVALID_PIN and no row of the link’s written; an unknown wallet likewise', async () => {
    const link = await createLink(t, sk, { label: 'Pin', amountType: 'FIXED', amount: 700, collect: { name: true } });
    const payer = await newWallet(t, 10_000);
    await refusesWithNothingWritten(
      async () =>
        expectError(await payLink(t, link, { phone: payer.phone, pin: '0000', name: 'X' }), 401, 'INVALID_PIN'),
      { link, phone: payer.phone },
    );
    await refusesWithNothingWritten(
      async () => {
        const unknown = await payLink(t, link, { phone: '+22239999999', pin: '1234', name: 'X' });
        assert.ok(unknown.status >= 400 && unknown.status < 500, unknown.text);
      },
      { link },
    );
    // Without a key, the PIN is not asked of a link that takes no payment: the refusal comes first.
    // With one, the PIN is checked first (a retry of a payment replays its receipt; see below).
    expectStatus(await patchLink(t, sk, link.referenceNumber, { active: false }), 200);
    const unkeyed = await t.request('POST', `/checkout/links/${slugOf(link)}/pay`, {
      body: { phone: payer.phone, pin: '0000', name: 'X' },
    });
    expectError(unkeyed, 409, 'PAYMENT_LINK_INACTIVE');
    expectError(await payLink(t, link, { phone: payer.phone, pin: '0000', name: 'X' }), 401, 'INVALID_PIN');
    expectError(await payLink(t, link, { ...payer, name: 'X' }), 409, 'PAYMENT_LINK_INACTIVE');
    expectStatus(await patchLink(t, sk, link.referenceNumber, { active: true }), 200);
    expectStatus(await payLink(t, link, { ...payer, name: 'X' }), 200);
  });

  test("a retry with the page's key answers its payment again, even once that payment completed the link or it was switched off", async () => {
    const link = await createLink(t, sk, { label: 'Unique', amountType: 'FIXED', amount: 2500, maxPayments: 1 });
    const payer = await newWallet(t, 10_000);
    const path = `/checkout/links/${slugOf(link)}/pay`;
    const first = await t.request('POST', path, { body: payer, idempotencyKey: 'page-attempt-1' });
    expectStatus(first, 200);
    const before = await rowCounts(t);
    const retry = await t.request('POST', path, { body: payer, idempotencyKey: 'page-attempt-1' });
    expectStatus(retry, 200);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(retry.body, first.body);
    assert.deepEqual(await rowCounts(t), before);
    assert.equal(await walletBalance(t, payer.phone), 7500);
    // A retry must still give the PIN; another attempt (a new key, or none) is refused.
    expectError(
      await t.request('POST', path, { body: { ...payer, pin: '0000' }, idempotencyKey: 'page-attempt-1' }),
      401,
      'INVALID_PIN',
    );
    expectError(
      await t.request('POST', path, { body: payer, idempotencyKey: 'page-attempt-2' }),
      409,
      'PAYMENT_LINK_COMPLETED',
    );
    expectError(await t.request('POST', path, { body: payer }), 409, 'PAYMENT_LINK_COMPLETED');
    assert.equal((await getLink(t, sk, link.referenceNumber)).paymentsCount, 1);

    const open = await createLink(t, sk, { label: 'Ouvert', amountType: 'FIXED', amount: 500 });
    const openPath = `/checkout/links/${slugOf(open)}/pay`;
    const paid = await t.request('POST', openPath, { body: payer, idempotencyKey: 'page-attempt-3' });
    expectStatus(paid, 200);
    expectStatus(await patchLink(t, sk, open.referenceNumber, { active: false }), 200);
    const again = await t.request('POST', openPath, { body: payer, idempotencyKey: 'page-attempt-3' });
    expectStatus(again, 200);
    assert.deepEqual(again.body, paid.body);
    assert.equal(await walletBalance(t, payer.phone), 7000);
  });

  test("the business's payer fee: shown on the link's view, charged on top of the amount, on the receipt", async () => {
    const own = await t.createBusiness();
    expectStatus(await t.admin('PUT', `/businesses/${own.id}/fees`, { payerFee: 150 }), 200);
    const link = await createLink(t, own.keys.secretTest, { label: 'Frais', amountType: 'OPEN' });
    assert.equal((await payerView(t, link)).body.data.payerFee, 150);
    const payer = await newWallet(t, 20_000);
    const paid = await payLink(t, link, { ...payer, amount: 10_000 });
    expectStatus(paid, 200);
    assert.equal(paid.body.data.receipt.amountPaid, 10_000);
    assert.equal(paid.body.data.receipt.payerFee, 150);
    assert.equal(await walletBalance(t, payer.phone), 20_000 - 10_150);
    // Too little for the amount and the fee: refused whole.
    const short = await newWallet(t, 10_100);
    expectError(await payLink(t, link, { ...short, amount: 10_000 }), 402, 'INSUFFICIENT_BALANCE');
    assert.equal(await walletBalance(t, short.phone), 10_100);
    assert.equal((await getLink(t, own.keys.secretTest, link.referenceNumber)).amountCollected, 10_000);
    await ledgerIsSound(t);
  });

  test('too little in the wallet: INSUFFICIENT_BALANCE, nothing debited, no intent left', async () => {
    const link = await createLink(t, sk, { label: 'Cher', amountType: 'FIXED', amount: 5000 });
    const payer = await newWallet(t, 4999);
    const merchantBefore = await t.request('GET', '/api/v1/dev/balance', { key: sk });
    await refusesWithNothingWritten(
      async () => expectError(await payLink(t, link, payer), 402, 'INSUFFICIENT_BALANCE'),
      { link, phone: payer.phone },
    );
    const intents = await t.request('GET', `${LINKS}/${link.referenceNumber}/intents`, { key: sk });
    assert.equal(intents.body.data.total, 0);
    const merchantAfter = await t.request('GET', '/api/v1/dev/balance', { key: sk });
    assert.equal(merchantAfter.body.data.available, merchantBefore.body.data.available);
    await ledgerIsSound(t);
  });

  test('a business whose API is switched off: FEATURE_DISABLED, nothing written; on again, it pays', async () => {
    const own = await t.createBusiness();
    const link = await createLink(t, own.keys.secretTest, { label: 'Arrêt', amountType: 'FIXED', amount: 300 });
    const payer = await newWallet(t, 10_000);
    expectStatus(await t.admin('POST', '/api/disable', { businessId: own.id }), 200);
    try {
      const view = await payerView(t, link);
      expectStatus(view, 200);
      assert.equal(view.body.data.refusal, 'FEATURE_DISABLED');
      assert.equal(view.body.data.status, 'ACTIVE');
      const before = { rows: await rowCounts(t), wallet: await walletBalance(t, payer.phone) };
      expectError(await payLink(t, link, payer), 503, 'FEATURE_DISABLED');
      assert.deepEqual(await rowCounts(t), before.rows);
      assert.equal(await walletBalance(t, payer.phone), before.wallet);
    } finally {
      expectStatus(await t.admin('POST', '/api/enable', { businessId: own.id }), 200);
    }
    assert.equal((await payerView(t, link)).body.data.refusal, null);
    expectStatus(await payLink(t, link, payer), 200);
  });

  test('a live link of a business not approved for live: LIVE_ACCESS_NOT_APPROVED, nothing written', async () => {
    // The API takes no live key of an unapproved business, so the link is made while approved and
    // the approval is then withdrawn in the database (no operator command withdraws it).
    const own = await t.createBusiness();
    const link = await createLink(t, own.keys.secretLive, { label: 'Live', amountType: 'FIXED', amount: 300 });
    assert.equal(link.sandbox, false);
    const payer = await newWallet(t, 10_000, 'live');
    await t.runtime.db.updateTable('businesses').set({ live_approved: false }).where('id', '=', own.id).execute();
    const view = await payerView(t, link);
    assert.equal(view.body.data.refusal, 'LIVE_ACCESS_NOT_APPROVED');
    assert.equal(view.body.data.sandbox, false);
    const before = { rows: await rowCounts(t), wallet: await walletBalance(t, payer.phone, 'live') };
    expectError(await payLink(t, link, payer), 403, 'LIVE_ACCESS_NOT_APPROVED');
    assert.deepEqual(await rowCounts(t), before.rows);
    assert.equal(await walletBalance(t, payer.phone, 'live'), before.wallet);
    await t.runtime.db.updateTable('businesses').set({ live_approved: true }).where('id', '=', own.id).execute();
    expectStatus(await payLink(t, link, payer), 200);
    assert.equal(await walletBalance(t, payer.phone, 'live'), before.wallet - 300);
    // A test wallet does not pay a live link.
    const testPayer = await newWallet(t, 10_000);
    const refused = await payLink(t, link, testPayer);
    assert.ok(refused.status >= 400 && refused.status < 500, refused.text);
    assert.equal(await walletBalance(t, testPayer.phone), 10_000);
  });

  test('events: payment.created and payment.confirmed carry the link and what the payer wrote; payment_link.completed once', async () => {
    const link = await createLink(t, sk, {
      label: 'Trois places',
      amountType: 'OPEN',
      maxPayments: 3,
      collect: { name: true, note: true },
      metadata: { salle: 'A' },
    });
    const payer = await newWallet(t, 100_000);
    const references: string[] = [];
    for (const amount of [1000, 2000, 3000]) {
      const response = await payLink(t, link, { ...payer, amount, name: 'Oumou', note: `place ${amount}` });
      expectStatus(response, 200);
      references.push(response.body.data.receipt.reference);
      // No event of the link before its last payment.
      if (references.length < 3) assert.deepEqual(await listEvents(t, sk, link.referenceNumber), []);
    }
    const events = await eventsOf(t, sk, references[0]!);
    assert.deepEqual(
      events.map((event) => event.event),
      ['payment.created', 'payment.confirmed'],
    );
    for (const event of events) {
      assert.equal(event.data.payment_link, link.referenceNumber, event.event);
      assert.equal(event.data.payer_name, 'Oumou', event.event);
      assert.equal(event.data.payer_note, 'place 1000', event.event);
      assert.equal(event.data.reference_number, references[0]);
      assert.deepEqual(event.data.metadata, { salle: 'A' });
    }
    assert.equal(events[1]!.data.amount, 1000);

    const completed = await eventsOf(t, sk, link.referenceNumber);
    assert.deepEqual(
      completed.map((event) => event.event),
      ['payment_link.completed'],
    );
    const data = completed[0]!.data;
    assert.deepEqual(
      {
        reference_number: data.reference_number,
        status: data.status,
        payments_count: data.payments_count,
        max_payments: data.max_payments,
        amount_collected: data.amount_collected,
        currency: data.currency,
        label: data.label,
        metadata: data.metadata,
      },
      {
        reference_number: link.referenceNumber,
        status: 'COMPLETED',
        payments_count: 3,
        max_payments: 3,
        amount_collected: 6000,
        currency: 'MRU',
        label: 'Trois places',
        metadata: { salle: 'A' },
      },
    );
    assert.equal(completed[0]!.sandbox, true);
    assert.equal(typeof completed[0]!.created_at, 'string');
    // Refused payments afterwards send nothing; raising the limit and reaching it again sends it again.
    expectError(await payLink(t, link, { ...payer, amount: 100, name: 'X' }), 409, 'PAYMENT_LINK_COMPLETED');
    assert.equal((await listEvents(t, sk, link.referenceNumber)).length, 1);
    expectStatus(await patchLink(t, sk, link.referenceNumber, { maxPayments: 4 }), 200);
    expectStatus(await payLink(t, link, { ...payer, amount: 100, name: 'X' }), 200);
    const again = await listEvents(t, sk, link.referenceNumber, 'payment_link.completed');
    assert.equal(again.length, 2);
    assert.equal(again[1]!.payload.data.payments_count, 4);
  });

  test("a refund of a link's intent: payment.refunded carries the link; the link's count is unchanged", async () => {
    const link = await createLink(t, sk, {
      label: 'Retour',
      amountType: 'FIXED',
      amount: 8000,
      collect: { name: true },
    });
    const payer = await newWallet(t, 50_000);
    const paid = await payLink(t, link, { ...payer, name: 'Ahmed' });
    expectStatus(paid, 200);
    const reference = paid.body.data.receipt.reference;
    const refund = await act(t, sk, reference, 'refund', { amount: 3000, reason: 'taille' });
    expectStatus(refund, 200);
    assert.equal(refund.body.data.totalAmountRefunded, 3000);
    assert.equal(refund.body.data.paymentLink, link.referenceNumber);
    assert.equal(await walletBalance(t, payer.phone), 50_000 - 8000 + 3000);
    const events = await eventsOf(t, sk, reference);
    const refunded = events.find((event) => event.event === 'payment.refunded');
    assert.ok(refunded, events.map((event) => event.event).join());
    assert.equal(refunded.data.payment_link, link.referenceNumber);
    assert.equal(refunded.data.payer_name, 'Ahmed');
    assert.equal(refunded.data.amount_refunded, 3000);
    const after = await getLink(t, sk, link.referenceNumber);
    assert.equal(after.paymentsCount, 1);
    assert.equal(after.amountCollected, 8000);
    expectStatus(await act(t, sk, reference, 'refund', {}), 200);
    assert.equal(await walletBalance(t, payer.phone), 50_000);
    await ledgerIsSound(t);
  });

  test("a link's intent is paid already: it cannot be paid again, cancelled or simulated", async () => {
    const link = await createLink(t, sk, { label: 'Une', amountType: 'FIXED', amount: 100 });
    const payer = await newWallet(t, 10_000);
    const paid = await payLink(t, link, payer);
    expectStatus(paid, 200);
    const reference = paid.body.data.receipt.reference;
    expectError(await act(t, sk, reference, 'simulate'), 400, 'INTENT_NOT_PENDING');
    expectError(await act(t, sk, reference, 'cancel'), 400, 'INTENT_CANCEL_INVALID_STATUS');
    const again = await t.request('POST', `/checkout/intents/${paid.body.data.shortCode}/pay`, {
      body: { phone: payer.phone, pin: payer.pin },
    });
    assert.ok(again.status >= 400 && again.status < 500, again.text);
    assert.equal(await walletBalance(t, payer.phone), 9900);
  });
});
