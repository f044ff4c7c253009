import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { sql } from 'kysely';
import { adminCli } from '../support/admin-cli.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/harness.js';
import { nodeEntry } from '../support/node-entry.js';

/** The admin CLI as a real process, against this test's server (asynchronously: it serves the CLI). */
function cliProcess(t: TestApp, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeEntry('src/cli/admin.ts'), ...args],
      { env: { ...process.env, ADMIN_URL: t.baseUrl, ADMIN_TOKEN } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The same CLI code in-process: no Node start per command (cliProcess proves the program once). */

describe('admin CLI: wallets and the ledger check', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  test('wallet create, credit and show', async () => {
    const created = await adminCli(
      t,
      'wallet',
      'create',
      '--phone',
      '+22233445566',
      '--pin',
      '2580',
      '--balance',
      '5000',
      '--env',
      'live',
      '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const wallet = JSON.parse(created.stdout);
    assert.deepEqual(
      { ...wallet, id: undefined },
      {
        id: undefined,
        phone: '+22233445566',
        environment: 'live',
        balance: 5000,
        status: 'active',
        lockedUntil: null,
      },
    );
    const credited = await adminCli(
      t,
      'wallet',
      'credit',
      '--phone',
      '+22233445566',
      '--amount',
      '2500',
      '--env',
      'live',
      '--json',
    );
    assert.equal(JSON.parse(credited.stdout).balance, 7500);
    const shown = await adminCli(t, 'wallet', 'show', '--phone', '+22233445566', '--env', 'live', '--json');
    assert.equal(JSON.parse(shown.stdout).balance, 7500);
    const missing = await adminCli(t, 'wallet', 'show', '--phone', '+22233445566', '--env', 'test', '--json');
    assert.equal(missing.code, 1);
    assert.equal(JSON.parse(missing.stderr).error.code, 'WALLET_NOT_FOUND');
    const badPin = await adminCli(
      t,
      'wallet',
      'create',
      '--phone',
      '+22233445567',
      '--pin',
      '12',
      '--env',
      'live',
      '--json',
    );
    assert.equal(badPin.code, 1);
    const sandbox = await adminCli(t, 'wallet', 'show', '--phone', '+22220000003', '--env', 'test', '--json');
    assert.equal(JSON.parse(sandbox.stdout).status, 'locked', 'the sandbox wallets exist from the first start');
  });

  test('ledger check exits 0 on a sound ledger and 1, naming the problem, when an invariant breaks', async () => {
    const sound = await adminCli(t, 'ledger', 'check', '--json');
    assert.equal(sound.code, 0, sound.stderr);
    const report = JSON.parse(sound.stdout);
    assert.equal(report.ok, true);
    assert.ok(report.postings > 0);
    // Postings cannot be edited, even by hand.
    await assert.rejects(sql`UPDATE ledger_postings SET amount = amount + 1`.execute(t.runtime.db), /immutable/);
    await assert.rejects(sql`DELETE FROM ledger_postings`.execute(t.runtime.db), /immutable/);
    // A balance that drifted from its postings is found.
    await sql`UPDATE ledger_accounts SET balance = balance + 1 WHERE kind = 'wallet'
              AND id = (SELECT min(id) FROM ledger_accounts WHERE kind = 'wallet')`.execute(t.runtime.db);
    const broken = await cliProcess(t, 'ledger', 'check', '--json');
    assert.equal(broken.code, 1);
    const problems = JSON.parse(broken.stdout).problems as string[];
    assert.ok(
      problems.some((problem) => /holds .* but its postings sum to/.test(problem)),
      problems.join('\n'),
    );
  });
});
