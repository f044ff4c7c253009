import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { checkLedger } from '../../src/modules/payments/ledger.js';
import {
  SANDBOX_ANSWERING_PHONES,
  SANDBOX_SCENARIOS,
  SANDBOX_WALLET_PIN,
  SANDBOX_WALLETS,
  type SandboxScenario,
} from '../../src/modules/sandbox/sandbox.js';
import { pinMatches } from '../../src/modules/wallets/service.js';
import { act, createIntent } from '../intents/support.js';
import { createPayout, earn, newPhone, payoutTo, sendPayouts } from '../payouts/support.js';
import { expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';

/** How the catalogue's first column names a scenario. */
function catalogueName({ trigger }: SandboxScenario): string {
  if ('amount' in trigger) return `\`${trigger.amount}\``;
  if ('phone' in trigger) return `\`${trigger.phone}\``;
  return 'any other phone';
}

/** docs/payments.md's scenario catalogue: each row's cells by its first one. */
function catalogueRows(): Map<string, string[]> {
  const doc = readFileSync('docs/payments.md', 'utf8');
  const section = doc.slice(doc.indexOf('### Sandbox scenarios'));
  const table = section.slice(section.indexOf('| phone or amount')).split('\n\n')[0]!;
  const rows = table
    .split('\n')
    .slice(2)
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  return new Map(rows.map((cells) => [cells[0]!, cells.slice(1)]));
}

const mru = (centimes: number) =>
  `${(centimes / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} MRU`;

describe('the sandbox scenario table (issue 48)', () => {
  test('docs/payments.md lists every scenario, with its outcomes, and no other', () => {
    const rows = catalogueRows();
    assert.ok(rows.size > 0, 'docs/payments.md has a scenario catalogue');
    for (const scenario of SANDBOX_SCENARIOS) {
      const name = catalogueName(scenario);
      const cells = rows.get(name);
      assert.ok(cells, `docs/payments.md's catalogue has a row for ${name}`);
      const row = cells.join(' | ');
      for (const outcome of scenario.outcomes) assert.ok(row.includes(`\`${outcome}\``), `${name}: ${outcome}`);
      if (scenario.wallet) {
        assert.ok(row.includes(`PIN \`${SANDBOX_WALLET_PIN}\``), `${name}: its PIN`);
        assert.ok(row.includes(mru(scenario.wallet.balance)), `${name}: ${mru(scenario.wallet.balance)}`);
      }
      if ('phone' in scenario.trigger) {
        const answering = (SANDBOX_ANSWERING_PHONES as Record<string, { afterSeconds: number | null }>)[
          scenario.trigger.phone
        ];
        if (answering?.afterSeconds) assert.ok(row.includes(`${answering.afterSeconds} s`), `${name}: its delay`);
      }
    }
    assert.deepEqual([...rows.keys()].sort(), SANDBOX_SCENARIOS.map(catalogueName).sort(), 'no other row');
  });

  test('the test wallets the pages list are the table rows that have a wallet', () => {
    assert.deepEqual(
      SANDBOX_WALLETS.map((wallet) => wallet.phone),
      SANDBOX_SCENARIOS.flatMap((scenario) =>
        scenario.wallet && 'phone' in scenario.trigger ? [scenario.trigger.phone] : [],
      ),
    );
    for (const wallet of SANDBOX_WALLETS) assert.equal(wallet.pin, SANDBOX_WALLET_PIN);
  });
});

describe('one way to open a sandbox wallet', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
  });
  afterAll(() => t.close());

  async function wallet(phone: string) {
    const row = await t.runtime.db
      .selectFrom('wallets as w')
      .innerJoin('ledger_accounts as a', (join) => join.onRef('a.owner_id', '=', 'w.id').on('a.kind', '=', 'wallet'))
      .select(['w.pin_hash', 'w.status', 'a.balance'])
      .where('w.environment', '=', 'test')
      .where('w.phone', '=', phone)
      .executeTakeFirst();
    return row && { ...row, balance: Number(row.balance) };
  }

  test('the start opens the table wallets; a simulation and a payout open theirs; all with one PIN hash', async () => {
    const sk = business.keys.secretTest;
    for (const expected of SANDBOX_WALLETS) {
      const seeded = await wallet(expected.phone);
      assert.ok(seeded, expected.phone);
      assert.equal(seeded.status, expected.locked ? 'locked' : 'active', expected.phone);
      assert.equal(seeded.balance, expected.balance, expected.phone);
    }

    const payer = newPhone();
    const intent = await createIntent(t, sk, { amount: 1_000 });
    expectStatus(await act(t, sk, intent.referenceNumber, 'simulate', { payerPhone: payer }), 200);
    await earn(t, sk, 50_000);
    const payee = newPhone();
    expectStatus(await createPayout(t, sk, payoutTo(payee, 1_000)), 201);
    await sendPayouts(t);

    const opened = [...SANDBOX_WALLETS.map((seeded) => seeded.phone), payer, payee];
    const hashes = new Set<string>();
    for (const phone of opened) {
      const row = await wallet(phone);
      assert.ok(row, `${phone} has a wallet`);
      hashes.add(row.pin_hash);
    }
    assert.equal(hashes.size, 1, 'every sandbox wallet of a process stores the one hash of the sandbox PIN');
    assert.ok(await pinMatches(SANDBOX_WALLET_PIN, [...hashes][0]!));
    assert.equal((await wallet(payee))!.balance, 1_000, 'a payout opens an empty wallet and pays it');
    assert.deepEqual((await checkLedger(t.runtime.db)).problems, []);
  });
});
