import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { formatAmount } from '../../src/lib/i18n.js';
import { BALANCE_TRANSACTION_TYPES } from '../../src/modules/payments/balance-types.js';
import { SANDBOX_FAILING_PAYOUT_PHONE } from '../../src/modules/sandbox/sandbox.js';
import { act, createIntent } from '../intents/support.js';
import { createPayout, newPhone, payoutTo, sendPayouts } from '../payouts/support.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { allBalanceTransactions, assertLedgerSound, BALANCE, fold, setPlan } from './support.js';

const STATEMENTS = `${BALANCE}/statements`;

interface Txn {
  id: string;
  type: string;
  amount: number;
  fee: number;
  net: number;
  description: string;
  source: { reference: string };
  createdAt: string;
}

interface Month {
  label: string;
  first: string;
  last: string;
}

/** The UTC month `back` months before `now`'s. */
function monthBefore(now: Date, back: number): Month {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back + 1, 0));
  return {
    label: start.toISOString().slice(0, 7),
    first: start.toISOString().slice(0, 10),
    last: end.toISOString().slice(0, 10),
  };
}

/**
 * Moves transactions to `at` (a second apart, in the order given), and counts the business's
 * balance transactions again by day, as the insert trigger would have had they been made then.
 */
async function backdate(t: TestApp, businessId: string, ids: string[], at: Date): Promise<void> {
  for (const [index, id] of ids.entries()) {
    await sql`UPDATE balance_transactions SET created_at = ${new Date(at.getTime() + index * 1000)}::timestamptz
      WHERE id = ${id}`.execute(t.runtime.db);
  }
  await sql`DELETE FROM list_counts WHERE list = 'balance' AND business_id = ${businessId}`.execute(t.runtime.db);
  await sql`INSERT INTO list_counts (list, business_id, environment, day, status, slot, n)
    SELECT 'balance', business_id, environment, (created_at AT TIME ZONE 'UTC')::date, type, 0, count(*)
    FROM balance_transactions WHERE business_id = ${businessId} GROUP BY 2, 3, 4, 5`.execute(t.runtime.db);
}

/** What a list of transactions adds up to, by type, as a statement's totals say it. */
function totalsOf(items: Txn[]) {
  return BALANCE_TRANSACTION_TYPES.map((type) => {
    const ofType = items.filter((item) => item.type === type);
    const sum = (pick: (item: Txn) => number) => ofType.reduce((total, item) => total + pick(item), 0);
    return {
      type,
      count: ofType.length,
      gross: sum((item) => item.amount),
      fees: sum((item) => item.fee),
      net: sum((item) => item.net),
    };
  });
}

const netOf = (items: Txn[]) => items.reduce((sum, item) => sum + item.net, 0);

/** The transaction columns of a statement's CSV (decision 086). */
const CSV_COLUMNS = 9;

/** Centimes as the statement's CSV writes them: MRU, two decimals after a dot (decision 086). */
const mru = (centimes: number) => (centimes / 100).toFixed(2);

/** The English label of each type, as the statement names it. */
const TYPE_NAMES: Record<string, string> = {
  payment: 'Payment',
  refund: 'Refund',
  order_payment: 'Order payment',
  order_refund: 'Order refund',
  order_adjustment: 'Order adjustment',
  payout: 'Payout',
  payout_fee: 'Payout fee',
  payout_reversal: 'Payout returned',
};

/** The rows of a statement's CSV: its summary block, and the transactions under their header. */
function readCsv(text: string): { summary: string[][]; header: string[]; rows: string[][] } {
  const lines = parse(text, { relax_column_count: true, skip_empty_lines: true }) as string[][];
  const headerAt = lines.findIndex((line) => line.length === CSV_COLUMNS);
  assert.ok(headerAt > 0, text.slice(0, 500));
  return { summary: lines.slice(0, headerAt), header: lines[headerAt]!, rows: lines.slice(headerAt + 1) };
}

/** The ids of the transaction rows of a statement page, in its order. */
function pageRowIds(html: string): string[] {
  return [...html.matchAll(/<tr id="(txn_[^"]+)"/g)].map((match) => match[1]!);
}

/** Issue 35, item 2: a merchant's balance per month, or per range of days, as JSON, CSV or a printable page. */
describe('balance statements', () => {
  let t: TestApp;
  let business: TestBusiness;
  let sk: string;
  const now = new Date();
  const current = monthBefore(now, 0);
  const previous = monthBefore(now, 1);
  const older = monthBefore(now, 2);
  /** Oldest first, as the API lists them once backdated: by month. */
  let byMonth: Record<'older' | 'previous' | 'current', Txn[]>;

  const statement = (path: string, key = sk) => t.request('GET', `${STATEMENTS}${path}`, { key });

  beforeAll(async () => {
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness({ name: 'Boutique <script>alert("name")</script>' });
    sk = business.keys.secretTest;
    await setPlan(t, business.id, { providerBps: 250, payerFee: 0, tofBps: 500, tteBps: 0 });
    expectStatus(
      await t.admin('PUT', `/businesses/${business.id}/fees`, { payoutFeeFlat: 100, payoutFeeBps: 100 }),
      200,
    );
    const first = await createIntent(t, sk, { amount: 12_345, label: 'Thé <script>alert("x")</script>' });
    expectStatus(await act(t, sk, first.referenceNumber, 'simulate'), 200);
    const second = await createIntent(t, sk, { amount: 40_001, label: '=SUM(A1), "quoted"' });
    expectStatus(await act(t, sk, second.referenceNumber, 'simulate'), 200);
    expectStatus(await act(t, sk, first.referenceNumber, 'refund', { amount: 2_501 }), 200);
    expectStatus(await createPayout(t, sk, payoutTo(newPhone(), 10_000, { description: 'Week <b>48</b>' })), 201);
    expectStatus(await createPayout(t, sk, payoutTo(SANDBOX_FAILING_PAYOUT_PHONE, 5_000)), 201);
    await sendPayouts(t);
    await fold(t);
    // Two months of history: the first payment two months back, the second and the refund last month.
    const made: Txn[] = (await allBalanceTransactions(t, sk)).reverse();
    // A payout and its fee are made in the same instant: their order is their ids'.
    assert.deepEqual(made.map((item) => item.type).slice(0, 3), ['payment', 'payment', 'refund']);
    assert.deepEqual(
      made
        .map((item) => item.type)
        .slice(3)
        .sort(),
      ['payout', 'payout', 'payout_fee', 'payout_fee', 'payout_reversal'],
    );
    await backdate(t, business.id, [made[0]!.id], new Date(`${older.first}T12:00:00.000Z`));
    await backdate(t, business.id, [made[1]!.id, made[2]!.id], new Date(`${previous.last}T23:59:58.000Z`));
    const listed = async (month: Month) =>
      ((await allBalanceTransactions(t, sk, `&from=${month.first}&to=${month.last}`)) as Txn[]).reverse();
    byMonth = { older: await listed(older), previous: await listed(previous), current: await listed(current) };
    assert.deepEqual(
      [byMonth.older.length, byMonth.previous.length, byMonth.current.length],
      [1, 2, 5],
      'the months as the list sees them',
    );
  });
  afterAll(() => t.close());

  test('a month: totals are the sums of the listed transactions, and each month opens where the last one closed', async () => {
    let opening = 0;
    for (const [month, items] of [
      [older, byMonth.older],
      [previous, byMonth.previous],
      [current, byMonth.current],
    ] as const) {
      const response = await statement(`/${month.label}`);
      expectStatus(response, 200);
      assert.deepEqual(response.body, {
        success: true,
        data: {
          period: {
            from: `${month.first}T00:00:00.000Z`,
            to: new Date(Date.parse(`${month.last}T00:00:00.000Z`) + 86_400_000).toISOString(),
          },
          business: { id: business.id, name: 'Boutique <script>alert("name")</script>' },
          currency: 'MRU',
          sandbox: true,
          openingBalance: opening,
          closingBalance: opening + netOf(items),
          transactionCount: items.length,
          totals: totalsOf(items),
        },
      });
      opening = response.body.data.closingBalance;
    }
    const balance = await t.request('GET', BALANCE, { key: sk });
    assert.equal(opening, balance.body.data.available, 'this month closes on the balance');
    const nextMonth = await statement(`/${monthBefore(now, -1).label}`);
    assert.equal(nextMonth.body.data.openingBalance, opening, 'and the next one opens on it');
    assert.equal(nextMonth.body.data.transactionCount, 0);
  });

  test('a range of days: the same figures over several months, bounds included', async () => {
    const all = [...byMonth.older, ...byMonth.previous, ...byMonth.current];
    const whole = await statement(`?from=${older.first}&to=${current.last}`);
    expectStatus(whole, 200);
    assert.equal(whole.body.data.openingBalance, 0);
    assert.equal(whole.body.data.closingBalance, netOf(all));
    assert.equal(whole.body.data.transactionCount, all.length);
    assert.deepEqual(whole.body.data.totals, totalsOf(all));
    // Its last day only: the transactions moved to its last second are in, the next day's are not.
    const lastDay = await statement(`?from=${previous.last}&to=${previous.last}`);
    expectStatus(lastDay, 200);
    assert.equal(lastDay.body.data.openingBalance, netOf(byMonth.older));
    assert.equal(lastDay.body.data.transactionCount, 2);
    assert.deepEqual(lastDay.body.data.period, {
      from: `${previous.last}T00:00:00.000Z`,
      to: `${current.first}T00:00:00.000Z`,
    });
    // A leap year's 366 days are one statement.
    expectStatus(await statement('?from=2024-01-01&to=2024-12-31'), 200);
  });

  test('CSV: the summary, then every transaction of the period oldest first, as the export writes them', async () => {
    const response = await statement(`/${previous.label}?format=csv`);
    expectStatus(response, 200);
    assert.equal(response.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(response.headers.get('content-disposition'), `attachment; filename="statement-${previous.label}.csv"`);
    const json = (await statement(`/${previous.label}`)).body.data;
    const { summary, header, rows } = readCsv(response.text);
    assert.deepEqual(summary, [
      ['Business', 'Boutique <script>alert("name")</script>'],
      ['Period', previous.first, previous.last],
      ['Currency', 'MRU'],
      ['Opening balance (MRU)', mru(json.openingBalance)],
      ['Transaction type', 'Count', 'Gross (MRU)', 'Fees (MRU)', 'Net (MRU)'],
      ...json.totals.map((total: { type: string; count: number; gross: number; fees: number; net: number }) => [
        TYPE_NAMES[total.type],
        String(total.count),
        ...[total.gross, total.fees, total.net].map(mru),
      ]),
      ['Closing balance (MRU)', mru(json.closingBalance)],
      ['Number of transactions', '2'],
    ]);
    // Issue 54 items 2 and 3: one balance column, amounts in MRU, the type and description worded.
    assert.deepEqual(header, [
      'Transaction ID',
      'Date (UTC)',
      'Transaction type',
      'Description',
      'Source',
      'Gross (MRU)',
      'Fee (MRU)',
      'Net (MRU)',
      'Balance after (MRU)',
    ]);
    let balance = json.openingBalance;
    assert.deepEqual(
      rows,
      byMonth.previous.map((item) => {
        balance += item.net;
        // A cell a spreadsheet would run as a formula starts with an apostrophe, as in the export.
        const description = item.description.startsWith('=') ? `'${item.description}` : item.description;
        return [
          item.id,
          item.createdAt,
          TYPE_NAMES[item.type],
          description,
          item.source.reference,
          mru(item.amount),
          mru(item.fee),
          mru(item.net),
          mru(balance),
        ];
      }),
    );
    assert.equal(balance, json.closingBalance);
    assert.ok(
      rows.some((row) => row[3]!.includes('"quoted"')),
      'quotes survive the round trip',
    );
  });

  test('CSV and page labels follow lang; a range names its file by its days', async () => {
    const csv = await statement(`?from=${older.first}&to=${current.last}&format=csv&lang=fr`);
    expectStatus(csv, 200);
    assert.equal(
      csv.headers.get('content-disposition'),
      `attachment; filename="statement-${older.first}_${current.last}.csv"`,
    );
    const { summary, header, rows } = readCsv(csv.text);
    assert.deepEqual(summary[0], ['Entreprise', 'Boutique <script>alert("name")</script>']);
    assert.deepEqual(summary.at(-2), [
      'Solde de clôture (MRU)',
      mru(netOf([...byMonth.older, ...byMonth.previous, ...byMonth.current])),
    ]);
    assert.equal(header[0], "Identifiant de l'opération");
    assert.equal(rows.length, 8);
    const arabicText = (await statement(`/${current.label}?format=csv&lang=ar`)).text;
    // A file carries no direction marks (decision 088): the references are not isolated in it.
    assert.doesNotMatch(arabicText, /[\u2066-\u2069]/);
    const arabic = readCsv(arabicText);
    assert.deepEqual(arabic.summary[3]![0], 'الرصيد الافتتاحي (MRU)');
    assert.ok(
      arabic.summary.some((line) => line[0] === 'تحويل'),
      'payout, in Arabic: the one word the dashboard uses',
    );
    // Types and descriptions in the file's language (issue 54 item 3): no English sentence left.
    const frenchTypes = new Set(rows.map((row) => row[2]));
    assert.ok(frenchTypes.has('Paiement') && frenchTypes.has('Versement restitué'), [...frenchTypes].join());
    for (const row of rows) assert.doesNotMatch(row[3]!, /\b(Payment|Refund|Payout|Fee of|returned)\b/, row[3]);
    assert.ok(rows.some((row) => row[3]!.startsWith('Versement ') && row[3]!.includes('échoué')));
    for (const row of arabic.rows) {
      assert.doesNotMatch(row[2]!, /[A-Za-z]/u, row.join());
      assert.doesNotMatch(row[3]!, /\b(Payment|Refund|Payout|Fee of|returned|failed)\b/, row.join());
    }
  });

  test('HTML: a printable page in the language asked for, every merchant text escaped', async () => {
    const json = (await statement(`/${current.label}`)).body.data;
    for (const [lang, dir] of [
      ['en', 'ltr'],
      ['fr', 'ltr'],
      ['ar', 'rtl'],
    ] as const) {
      const response = await statement(`/${current.label}?format=html&lang=${lang}`);
      expectStatus(response, 200);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(response.headers.get('content-disposition'), `inline; filename="statement-${current.label}.html"`);
      const html = response.text;
      assert.match(html, new RegExp(`^<!doctype html>\\n<html lang="${lang}" dir="${dir}">`));
      assert.match(html, /@media print\{/);
      assert.match(html, /@page\{size:A4/);
      // No script of its own, none of the merchant's: styles only, by the nonce of the policy.
      assert.ok(!/<script/i.test(html), 'no script element');
      assert.ok(html.includes('Boutique &lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;'));
      assert.ok(html.includes('Week &lt;b&gt;48&lt;/b&gt;'));
      assert.ok(!html.includes('<nav'), 'no navigation');
      // The time it was issued says its zone, as the statement's other times do.
      assert.match(html, /(Issued on|Émis le|صدر في) [^<]+ UTC</);
      const nonce = /<style nonce="([^"]+)">/.exec(html)?.[1];
      assert.ok(nonce);
      assert.match(
        String(response.headers.get('content-security-policy')),
        new RegExp(`style-src 'nonce-${nonce.replace(/[+/]/g, '\\$&')}'`),
      );
      assert.deepEqual(
        pageRowIds(html),
        byMonth.current.map((item) => item.id),
      );
      assert.ok(
        html.includes(
          `<dd id="closing-balance"><bdi class="money">${formatAmount(json.closingBalance, lang)}</bdi></dd>`,
        ),
        `${lang}: the closing balance as the language writes it`,
      );
      assert.ok(html.includes(`<dd id="transaction-count">${byMonth.current.length}</dd>`));
    }
    const arabic = (await statement(`/${current.label}?format=html&lang=ar`)).text;
    assert.ok(arabic.includes('<h1>كشف الرصيد</h1>'));
    assert.ok(arabic.includes('أوقية'), 'amounts in ouguiya');
    const french = (await statement(`/${current.label}?format=html&lang=fr`)).text;
    assert.ok(french.includes("<dt>Solde d'ouverture</dt>") || french.includes('<dt>Solde d&#39;ouverture</dt>'));
    const earlier = (await statement(`/${older.label}?format=html`)).text;
    assert.ok(earlier.includes('Thé &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'), 'a description, escaped');
    assert.ok(!earlier.includes('id="no-transactions"'));
  });

  test('another environment, or another business, sees its own statement: empty here', async () => {
    const live = await statement(`/${current.label}`, business.keys.secretLive);
    expectStatus(live, 200);
    assert.equal(live.body.data.sandbox, false);
    assert.deepEqual(
      [live.body.data.openingBalance, live.body.data.closingBalance, live.body.data.transactionCount],
      [0, 0, 0],
    );
    assert.ok(
      live.body.data.totals.every((total: { count: number; net: number }) => total.count === 0 && total.net === 0),
    );
    assert.deepEqual(
      live.body.data.totals.map((total: { type: string }) => total.type),
      [...BALANCE_TRANSACTION_TYPES],
    );
    const liveCsv = readCsv((await statement(`/${current.label}?format=csv`, business.keys.secretLive)).text);
    assert.deepEqual(liveCsv.rows, []);
    const livePage = (await statement(`/${current.label}?format=html`, business.keys.secretLive)).text;
    assert.deepEqual(pageRowIds(livePage), []);
    assert.ok(livePage.includes('<p id="no-transactions">No transactions in this period.</p>'));
    assert.ok(!livePage.includes('class="sandbox"'));
    const other = await t.createBusiness({ name: 'Someone else' });
    const theirs = await statement(`?from=${older.first}&to=${current.last}`, other.keys.secretTest);
    expectStatus(theirs, 200);
    assert.equal(theirs.body.data.transactionCount, 0);
    assert.equal(theirs.body.data.business.name, 'Someone else');
  });

  test('periods that do not exist are STATEMENT_PERIOD_INVALID; malformed ones and unknown options VALIDATION_ERROR', async () => {
    for (const path of [
      '/2026-13',
      '/2026-00',
      '/0000-01',
      '/9999-12',
      '?from=9999-12-01&to=9999-12-31',
      '?from=2026-02-30&to=2026-03-01',
      '?from=2026-01-01&to=2026-02-29',
      '?from=0000-12-31&to=0001-01-01',
      '?from=2026-05-02&to=2026-05-01',
      '?from=2025-01-01&to=2026-01-02',
      '/2026-13?format=csv',
      '?from=2026-05-02&to=2026-05-01&format=html',
    ]) {
      expectError(await statement(path), 400, 'STATEMENT_PERIOD_INVALID');
    }
    for (const path of [
      '/2026-1',
      '/202611',
      '/2026-11-01',
      '/2026-11?format=pdf',
      '/2026-11?lang=de',
      '/2026-11?colour=blue',
      '?from=2026-05-01',
      '?to=2026-05-01',
      '?from=2026-5-1&to=2026-05-02',
      '?from=2026-05-01T00:00:00Z&to=2026-05-02',
      '?from=2026-05-01&to=2026-05-02&page=2',
    ]) {
      expectError(await statement(path), 400, 'VALIDATION_ERROR');
    }
  });

  test('a secret key with balance:read only', async () => {
    expectError(await statement(`/${current.label}`, business.keys.publishableTest), 403, 'SECRET_KEY_REQUIRED');
    expectError(await t.request('GET', `${STATEMENTS}/${current.label}`), 401, 'MISSING_CREDENTIALS');
    const created = await t.admin('POST', '/keys', {
      businessId: business.id,
      kind: 'secret',
      environment: 'test',
      scopes: ['intents:read'],
    });
    expectStatus(created, 201);
    expectError(await statement(`/${current.label}`, created.body.data.key), 403, 'SCOPE_REQUIRED');
    expectError(
      await statement(`?from=${current.first}&to=${current.last}&format=csv`, created.body.data.key),
      403,
      'SCOPE_REQUIRED',
    );
  });

  test('a month of more transactions than one batch streams them all, in the order the balance took them', async () => {
    const bulk = await t.createBusiness({ name: 'Bulk' });
    // 12,001 rows in 3 instants, taken by the balance in another order than their times': batches
    // of 200 follow the balance's order (applied_order), not the times (issue 54 item 2).
    await sql`INSERT INTO balance_transactions (id, business_id, environment, type, amount, fee, net, source_reference,
        source_kind, detail, ledger_transaction_id, created_at, applied_order)
      SELECT 'txn_bulk' || lpad(i::text, 6, '0'), ${bulk.id}, 'test', 'payment', i, 1, i - 1, 'PI-0000000000000001',
        'payment_intent', jsonb_build_object('label', 'Bulk ' || i), 'ltx_bulk',
        ${`${previous.first}T08:00:00.000Z`}::timestamptz + (i % 3) * interval '1 hour',
        nextval('balance_transactions_applied_order_seq') + 0 * i
      FROM generate_series(1, 12001) AS i ORDER BY i`.execute(t.runtime.db);
    const expected = Array.from({ length: 12_001 }, (_, index) => index + 1);
    const key = bulk.keys.secretTest;
    const download = await statement(`/${previous.label}?format=csv`, key);
    // Sent as it is read, in batches: no length known beforehand.
    assert.equal(download.headers.get('transfer-encoding'), 'chunked');
    assert.equal(download.headers.get('content-length'), null);
    const csv = readCsv(download.text);
    assert.deepEqual(
      csv.rows.map((row) => row[0]),
      expected.map((i) => `txn_bulk${String(i).padStart(6, '0')}`),
    );
    const total = expected.reduce((sum, i) => sum + i - 1, 0);
    assert.equal(csv.rows.at(-1)![8], mru(total), 'the running balance ends on the closing balance');
    const json = (await statement(`/${previous.label}`, key)).body.data;
    assert.equal(json.closingBalance, total);
    assert.equal(json.transactionCount, 12_001);
    const page = (await statement(`/${previous.label}?format=html`, key)).text;
    assert.equal(pageRowIds(page).length, 12_001);
    assert.ok(page.trimEnd().endsWith('</html>'));
  });

  test('the ledger holds after every movement above', async () => {
    await fold(t);
    await assertLedgerSound(t);
  });
});
