import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import { manualClock } from '../support/clock.js';
import { createTestDatabase, testDatabaseKind } from '../support/database.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';
import { act, createIntent } from './support.js';
import { orderAction, simulate } from '../orders/support.js';
import { createProduct } from '../products/support.js';

/**
 * The money path in few statements (issue: "a payment and a refund each run in at most 10 SQL
 * statements"): every statement the app sends through Kysely is counted, BEGIN and COMMIT included.
 */
const MAX_STATEMENTS = 10;

describe('statements per payment and refund', () => {
  let t: TestApp;
  let business: TestBusiness;
  let counting = false;
  let statements: string[] = [];

  beforeAll(async () => {
    const testDatabase = await createTestDatabase({
      onStatement: (text) => {
        if (counting) statements.push(text);
      },
    });
    // A clock that stands still: a cached key expiring (or its "last used" written) while a slow
    // run counts a request would add a statement that is not the request's. The rate limit's
    // window stands still with it, hence a limit this file never reaches.
    t = await startTestApp({
      testDatabase,
      clock: manualClock(),
      config: { RATE_LIMIT_TEST_PER_MINUTE: '1000000' },
    });
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  /** The statements one request ran, from its start to its answer. */
  async function counted<T>(request: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    statements = [];
    counting = true;
    try {
      return { result: await request(), statements };
    } finally {
      counting = false;
    }
  }

  /** Each statement is a round trip: BEGIN and COMMIT count like the others. */
  function assertFew(what: string, run: string[], report?: (message: string) => void): void {
    report?.(`${what}: ${run.length} statements`);
    assert.ok(
      run.length <= MAX_STATEMENTS,
      `${what} ran ${run.length} statements:\n${run.map((s) => s.replace(/\s+/g, ' ').slice(0, 120)).join('\n')}`,
    );
  }

  test('simulate (a sandbox payment) and a refund each run at most 10 statements', async (context) => {
    const sk = business.keys.secretTest;
    const intent = await createIntent(t, sk, { amount: 10_000 });
    // The key is cached after its first use: read once so the count is the payment's own.
    expectStatus(await t.request('GET', `/api/v1/dev/intents/${intent.referenceNumber}`, { key: sk }), 200);

    const paid = await counted(() => act(t, sk, intent.referenceNumber, 'simulate', {}));
    expectStatus(paid.result, 200);
    assert.equal(paid.result.body.data.status, 'PAID');
    assertFew('simulate', paid.statements, (m) => context.annotate(m));

    const refunded = await counted(() => act(t, sk, intent.referenceNumber, 'refund', { amount: 2_500 }));
    expectStatus(refunded.result, 200);
    assert.equal(refunded.result.body.data.totalAmountRefunded, 2_500);
    assertFew('refund', refunded.statements, (m) => context.annotate(m));
    assert.ok((await checkLedger(t.runtime.db)).ok);
  });

  // Pay-by-code finds the intent by its code and then pays through this same request.
  test('a hosted checkout payment runs at most 10 statements, its PIN check and receipt included', async (context) => {
    // As the hosted page sends it (a key per attempt), and without a key.
    for (const idempotencyKey of [true, undefined]) {
      const intent = await createIntent(t, business.keys.secretTest, { amount: 4_000 });
      const paid = await counted(() =>
        t.request('POST', `/checkout/intents/${intent.shortCode}/pay`, {
          body: { phone: '+22220000001', pin: '1234' },
          ...(idempotencyKey ? { idempotencyKey } : {}),
        }),
      );
      expectStatus(paid.result, 200);
      assert.equal(paid.result.body.data.state, 'PAID');
      assertFew(`checkout pay ${idempotencyKey ? 'with' : 'without'} a key`, paid.statements, (m) =>
        context.annotate(m),
      );
    }
  });

  test('a refused PIN costs the same statements whether the phone has a wallet or not, locked or not', async () => {
    const wallet = { phone: '+22246000001', pin: '4321' };
    expectStatus(await t.admin('POST', '/wallets', { ...wallet, balance: 10_000, environment: 'test' }), 201);
    const unknown = '+22246000002';
    const intent = await createIntent(t, business.keys.secretTest, { amount: 1_000 });
    const attempt = (phone: string) =>
      counted(() => t.request('POST', `/checkout/intents/${intent.shortCode}/pay`, { body: { phone, pin: '9999' } }));
    const cost = async (phone: string, code: string) => {
      const { result, statements: run } = await attempt(phone);
      assert.equal(result.body.error.code, code, result.text);
      return run.length;
    };
    // Four wrong PINs, the fifth locks, the sixth is refused without a hash.
    for (let i = 0; i < 4; i++)
      assert.equal(await cost(wallet.phone, 'INVALID_PIN'), await cost(unknown, 'INVALID_PIN'));
    assert.equal(await cost(wallet.phone, 'WALLET_LOCKED'), await cost(unknown, 'WALLET_LOCKED'));
    assert.equal(await cost(wallet.phone, 'WALLET_LOCKED'), await cost(unknown, 'WALLET_LOCKED'));
  });

  test("an order's statements do not grow with its lines: placed, simulated or cancelled", async (context) => {
    const sk = business.keys.secretTest;
    const products: { id: string }[] = [];
    for (const [name, price] of [
      ['Tea', 2_000],
      ['Mint', 500],
      ['Sugar', 300],
      ['Bread', 150],
    ] as const) {
      products.push(await createProduct(t, sk, { name, price, quantity: 1_000, status: 'ACTIVE' }));
    }
    const lines = (n: number) => products.slice(0, n).map((product) => ({ productId: product.id, quantity: 2 }));
    let refundRun: string[] = [];
    const cost = async (n: number) => {
      const placed = await counted(() =>
        t.request('POST', `/storefront/shops/${business.shopId}/orders`, {
          body: { items: lines(n), customerName: 'Aicha', phone: '+22220000001', pin: '1234' },
          idempotencyKey: true,
        }),
      );
      expectStatus(placed.result, 201);
      const simulated = await counted(() => simulate(t, sk, lines(n), '+22220000001'));
      expectStatus(simulated.result, 201);
      const reference = simulated.result.body.data.referenceNumber;
      const cancelled = await counted(() => orderAction(t, sk, `/${reference}/cancel`, { reason: 'Closed today' }));
      expectStatus(cancelled.result, 200);
      assert.equal(cancelled.result.body.data.totalAmountRefunded, simulated.result.body.data.totalAmount);
      const another = await simulate(t, sk, lines(n), '+22220000001');
      expectStatus(another, 201);
      const refunded = await counted(() =>
        orderAction(t, sk, `/${another.body.data.referenceNumber}/refund`, { amount: 100 }),
      );
      expectStatus(refunded.result, 200);
      assert.equal(refunded.result.body.data.shopName, simulated.result.body.data.shopName);
      refundRun = refunded.statements;
      return [
        placed.statements.length,
        simulated.statements.length,
        cancelled.statements.length,
        refunded.statements.length,
      ];
    };
    const one = await cost(1);
    const four = await cost(4);
    context.annotate(`storefront order, sandbox order, paid cancel, refund: ${one.join(', ')} statements`);
    assert.deepEqual(four, one);
    // An order is a wallet payment too: the sandbox one within the payments' bound, the storefront
    // one with the PIN's attempt and its reset before its transaction on top. A refund of an order
    // is within the refunds' bound; a paid cancel is that refund with the stock it returns (a lock
    // and a write of the products) on top.
    assert.ok(one[1]! <= MAX_STATEMENTS, `a sandbox order ran ${one[1]} statements`);
    assert.ok(one[0]! <= MAX_STATEMENTS + 2, `a storefront order ran ${one[0]} statements`);
    // An order's refund writes its audit entry (issue 53) as a statement of its own, after the
    // refund's unit of work: one over the refunds' bound until the entry joins that unit.
    assert.ok(refundRun.length <= MAX_STATEMENTS + 1, `an order refund ran ${refundRun.length} statements`);
    assert.ok(one[2]! <= MAX_STATEMENTS + 2, `a paid cancel ran ${one[2]} statements`);
    assert.ok((await checkLedger(t.runtime.db)).ok);
  });

  // PostgreSQL plans a prepared statement for its first five calls, then keeps a generic plan
  // unless that looks dearer than planning each call: a statement whose generic plan looks dear
  // (the ledger transfer's, with its lines as arrays of unknown length) is planned on every call.
  // One PGlite session holds every statement the app prepared, so all of them can be read here.
  test.skipIf(testDatabaseKind === 'pglite' ? false : 'PGlite only: on PostgreSQL each pooled session has its own')(
    'the payment path runs on generic plans: no statement is planned again on every call',
    async () => {
      // The session may be one an earlier test file used: only the plans made in this loop count.
      const plans = async () =>
        new Map(
          (
            await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
              SELECT statement, generic_plans::int, custom_plans::int FROM pg_prepared_statements`.execute(t.runtime.db)
          ).rows.map((row) => [row.statement, row]),
        );
      const before = await plans();
      const sk = business.keys.secretTest;
      for (let i = 0; i < 12; i++) {
        const intent = await createIntent(t, sk, { amount: 2_000 + i });
        expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', {}), 200);
        expectStatus(await act(t, sk, intent.referenceNumber, 'refund', { amount: 100 }), 200);
      }
      const runs = [...(await plans()).values()]
        .map((row) => {
          const earlier = before.get(row.statement);
          const custom = row.custom_plans - (earlier?.custom_plans ?? 0);
          const generic = row.generic_plans - (earlier?.generic_plans ?? 0);
          return { statement: row.statement, custom, calls: custom + generic };
        })
        .filter((run) => run.calls >= 12);
      assert.ok(runs.length >= 5, `only ${runs.length} statements were run 12 times`);
      for (const run of runs) {
        assert.ok(
          run.custom <= 5,
          `planned ${run.custom} times of ${run.calls}: ${run.statement.replace(/\s+/g, ' ').slice(0, 160)}`,
        );
      }
    },
  );
});
