import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { parse } from 'csv-parse/sync';
import {
  Commerce,
  CommerceError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
} from '@commerce-developer-api/sdk';
import type { BalanceTransaction, QueryOf } from '@commerce-developer-api/sdk';
import { foldPendingMovements } from '../../src/modules/payments/ledger.js';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { checkedFetch } from '../support/openapi-check.js';

const PAYMENTS = [1000, 1100, 1200, 1300, 1400, 1500];
const REFUNDED = 400;

describe('balance transactions through the SDK', () => {
  let t: TestApp;
  let business: TestBusiness;
  let commerce: Commerce;
  /** The URLs the SDK asked for, to see the pages an iteration fetched. */
  const requested: URL[] = [];
  const intents: string[] = [];
  let order: string;

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
    commerce = new Commerce(business.keys.secretTest, {
      baseUrl: t.baseUrl,
      fetch: (input, init) => {
        requested.push(new URL(String(input)));
        return checkedFetch(input, init);
      },
    });
    for (const amount of PAYMENTS) {
      const intent = await commerce.intents.create({ amount, label: `balance ${amount}` });
      assert.equal((await commerce.intents.simulate(intent.referenceNumber)).status, 'PAID');
      intents.push(intent.referenceNumber);
    }
    await commerce.intents.refund(intents[0]!, { amount: REFUNDED });
    const product = await commerce.products.create({ name: 'Mint', price: 2500, quantity: 5, status: 'ACTIVE' });
    order = (await commerce.orders.simulate({ items: [{ productId: product.id, quantity: 1 }], customerName: 'Aicha' }))
      .referenceNumber;
  });
  afterAll(() => t.close());

  /** The transactions iterated over from `query`, and the page numbers the SDK fetched meanwhile. */
  async function iterate(query: QueryOf<'listBalanceTransactions'>) {
    requested.length = 0;
    const items: BalanceTransaction[] = [];
    for await (const transaction of commerce.balance.transactions.list(query)) items.push(transaction);
    const pages = requested
      .filter((url) => url.pathname.endsWith('/balance/transactions'))
      .map((url) => Number(url.searchParams.get('page')));
    return { items, pages };
  }

  test('list: one page, newest first, each with gross, fee and net; their nets sum to the balance', async () => {
    const page = await commerce.balance.transactions.list({ limit: 100 });
    assert.equal(page.total, PAYMENTS.length + 2);
    assert.equal(page.items.length, page.total);
    assert.equal(page.hasMore, false);
    const times = page.items.map((item) => Date.parse(item.createdAt));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      'newest first',
    );
    assert.equal(page.items[0]!.type, 'order_payment');
    assert.deepEqual(page.items[0]!.source, { reference: order, kind: 'order' });
    for (const item of page.items) {
      assert.match(item.id, /^txn_/);
      assert.equal(item.net, item.amount - item.fee);
      assert.equal(item.currency, 'MRU');
      assert.equal(item.sandbox, true);
    }
    const payments = page.items.filter((item) => item.type === 'payment');
    assert.deepEqual(payments.map((item) => item.amount).sort(), [...PAYMENTS].sort());
    for (const payment of payments) {
      assert.equal(payment.source.kind, 'payment_intent');
      assert.ok(intents.includes(payment.source.reference));
      assert.ok(payment.fee >= 0 && payment.net > 0);
    }
    const [refund] = page.items.filter((item) => item.type === 'refund');
    assert.deepEqual(refund!.source, { reference: intents[0], kind: 'payment_intent' });
    assert.equal(refund!.amount, -REFUNDED);
    assert.ok(refund!.net < 0);

    const balance = await commerce.balance.retrieve();
    assert.equal(
      page.items.reduce((sum, item) => sum + item.net, 0),
      balance.available,
    );

    const first = await commerce.balance.transactions.list({ limit: 3 });
    assert.deepEqual(
      first.items.map((item) => item.id),
      page.items.slice(0, 3).map((item) => item.id),
    );
    assert.equal(first.hasMore, true);
    assert.equal(first.total, page.total);
  });

  test('filters: type, source and dates', async () => {
    const refunds = await commerce.balance.transactions.list({ type: 'refund' });
    assert.equal(refunds.total, 1);
    assert.equal(refunds.items[0]!.source.reference, intents[0]);
    assert.equal((await commerce.balance.transactions.list({ type: 'payment' })).total, PAYMENTS.length);
    assert.equal((await commerce.balance.transactions.list({ type: 'order_payment' })).total, 1);
    assert.equal((await commerce.balance.transactions.list({ type: 'order_refund' })).total, 0);

    const ofIntent = await commerce.balance.transactions.list({ source: intents[0] });
    assert.deepEqual(ofIntent.items.map((item) => item.type).sort(), ['payment', 'refund']);
    const ofIntentRefund = await commerce.balance.transactions.list({ source: intents[0], type: 'refund' });
    assert.deepEqual(
      ofIntentRefund.items.map((item) => item.id),
      refunds.items.map((item) => item.id),
    );

    const all = (await commerce.balance.transactions.list({ limit: 100 })).items;
    const [newest, oldest] = [all[0]!, all.at(-1)!];
    const between = await commerce.balance.transactions.list({ from: oldest.createdAt, to: newest.createdAt });
    assert.equal(between.total, all.length);
    const since = await commerce.balance.transactions.list({ from: newest.createdAt });
    assert.deepEqual(
      since.items.map((item) => item.id),
      [newest.id],
    );
    assert.equal((await commerce.balance.transactions.list({ from: oldest.createdAt.slice(0, 10) })).total, all.length);
    assert.equal((await commerce.balance.transactions.list({ to: '2000-01-01' })).total, 0);
    const backwards = await commerce.balance.transactions
      .list({ from: '2030-01-02', to: '2030-01-01' })
      .then(undefined, (error: unknown) => error);
    assert.ok(backwards instanceof InvalidRequestError);
    assert.equal(backwards.code, 'VALIDATION_ERROR');
  });

  test('for await iterates every transaction once, page after page', async () => {
    const all = (await commerce.balance.transactions.list({ limit: 100 })).items.map((item) => item.id);

    const { items, pages } = await iterate({ limit: 3 });
    assert.deepEqual(
      items.map((item) => item.id),
      all,
    );
    assert.deepEqual(pages, [1, 2, 3], '8 transactions, 3 a page: 3 pages and no fourth request');

    // A filter is kept on every page; the last page is full, hasMore stops the iteration.
    const payments = await iterate({ type: 'payment', limit: 2 });
    assert.equal(payments.items.length, PAYMENTS.length);
    assert.equal(new Set(payments.items.map((item) => item.id)).size, PAYMENTS.length);
    assert.ok(payments.items.every((item) => item.type === 'payment'));
    assert.deepEqual(payments.pages, [1, 2, 3]);

    // From a given page on.
    const later = await iterate({ limit: 3, page: 2 });
    assert.deepEqual(
      later.items.map((item) => item.id),
      all.slice(3),
    );
    assert.deepEqual(later.pages, [2, 3]);

    assert.deepEqual(
      (await commerce.balance.transactions.list({ limit: 2 }).toArray()).map((item) => item.id),
      all,
    );
    assert.equal((await commerce.balance.transactions.list({ limit: 2 }).toArray(5)).length, 5);
  });

  test('retrieve: one by id, balanceAfter once settled; an unknown id is BALANCE_TRANSACTION_NOT_FOUND', async () => {
    const [newest] = (await commerce.balance.transactions.list({ limit: 1 })).items;
    assert.deepEqual(await commerce.balance.transactions.retrieve(newest!.id), newest);

    await foldPendingMovements(t.runtime.db);
    const settled = await commerce.balance.transactions.list({ limit: 100 }).toArray();
    assert.ok(settled.every((item) => item.balanceAfter !== null));
    const { available } = await commerce.balance.retrieve();
    assert.equal((await commerce.balance.transactions.retrieve(newest!.id)).balanceAfter, available);

    const missing = await commerce.balance.transactions.retrieve('txn_doesnotexist').catch((error: unknown) => error);
    assert.ok(missing instanceof NotFoundError && missing instanceof CommerceError);
    assert.equal(missing.code, 'BALANCE_TRANSACTION_NOT_FOUND');
    assert.equal(missing.statusCode, 404);

    const malformed = await commerce.balance.transactions.retrieve('pi_123').catch((error: unknown) => error);
    assert.ok(malformed instanceof InvalidRequestError);
    assert.equal(malformed.code, 'VALIDATION_ERROR');

    const publishable = new Commerce(business.keys.publishableTest, { baseUrl: t.baseUrl, fetch: checkedFetch });
    const denied = await publishable.balance.transactions.list().then(undefined, (error: unknown) => error);
    assert.ok(denied instanceof PermissionError);
    assert.equal(denied.code, 'SECRET_KEY_REQUIRED');
  });

  test('export: CSV text with a header row and every transaction, newest first', async () => {
    const listed = await commerce.balance.transactions.list({ limit: 100 });
    const csv = await commerce.balance.transactions.export();
    assert.equal(typeof csv, 'string');
    const [header] = csv.split('\n');
    assert.equal(
      header,
      'id,type,amount,fee,net,currency,sourceReference,sourceKind,description,balanceAfter,createdAt',
    );
    const rows = parse(csv, { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      rows.map((row) => row.id),
      listed.items.map((item) => item.id),
    );
    for (const [index, row] of rows.entries()) {
      const item = listed.items[index]!;
      assert.deepEqual(row, {
        id: item.id,
        type: item.type,
        amount: String(item.amount),
        fee: String(item.fee),
        net: String(item.net),
        currency: 'MRU',
        sourceReference: item.source.reference,
        sourceKind: item.source.kind,
        description: item.description,
        balanceAfter: item.balanceAfter === null ? '' : String(item.balanceAfter),
        createdAt: item.createdAt,
      });
    }

    const [newest, oldest] = [listed.items[0]!, listed.items.at(-1)!];
    const ranged = await commerce.balance.transactions.export({ from: oldest.createdAt, to: newest.createdAt });
    assert.equal(ranged, csv);
    const latest = parse(await commerce.balance.transactions.export({ from: newest.createdAt }), {
      columns: true,
    }) as Record<string, string>[];
    assert.deepEqual(
      latest.map((row) => row.id),
      [newest.id],
    );
    assert.equal(
      (await commerce.balance.transactions.export({ to: '2000-01-01' })).trim(),
      'id,type,amount,fee,net,currency,sourceReference,sourceKind,description,balanceAfter,createdAt',
    );
  });

  test('statements: a month, a range and the files agree with the transactions', async () => {
    const month = new Date().toISOString().slice(0, 7);
    const listed = await commerce.balance.transactions.list({ limit: 100 });
    const statement = await commerce.balance.statements.retrieve(month);
    assert.equal(statement.transactionCount, listed.total);
    assert.equal(
      statement.closingBalance - statement.openingBalance,
      listed.items.reduce((sum, item) => sum + item.net, 0),
    );
    const payments = statement.totals.find((total) => total.type === 'payment')!;
    assert.equal(payments.count, PAYMENTS.length);
    assert.equal(
      payments.gross,
      PAYMENTS.reduce((sum, amount) => sum + amount, 0),
    );
    const today = new Date().toISOString().slice(0, 10);
    const ranged = await commerce.balance.statements.forRange({ from: today, to: today });
    assert.equal(ranged.closingBalance, statement.closingBalance);
    const csv = await commerce.balance.statements.download(month, { format: 'csv', lang: 'fr' });
    assert.ok(listed.items.every((item) => csv.includes(item.id)));
    const page = await commerce.balance.statements.download(month, { format: 'html', lang: 'ar' });
    assert.match(page, /<html lang="ar" dir="rtl"/);
    await assert.rejects(commerce.balance.statements.retrieve('2026-13'), (error: unknown) => {
      assert.ok(error instanceof CommerceError);
      assert.equal(error.code, 'STATEMENT_PERIOD_INVALID');
      return true;
    });
  });
});
