import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');
const PAYMENTS = path.join(SRC, 'modules', 'payments') + path.sep;
const MIGRATIONS = path.join(SRC, 'db', 'migrations') + path.sep;

/** What other modules may take from the ledger: reads, the worker's fold, and types. */
const LEDGER_READS = new Set([
  'accountBalance',
  'accountBalances',
  'checkLedger',
  'foldPendingMovements',
  'LedgerTransfer',
  'BalanceEntry',
]);

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|sql|eta)$/.test(entry.name) ? [full] : [];
  });
}

/**
 * Issue 33: money has one home. Outside src/modules/payments (and the migrations that made the
 * tables), no code writes the ledger's tables or the balance transactions, and nothing imports
 * the ledger's writers.
 */
test('no module but payments writes a posting', () => {
  const offences: string[] = [];
  const writes =
    /(insert\s+into|update|delete\s+from|insertInto\(|updateTable\(|deleteFrom\()\s*['"`]?(ledger_postings|ledger_pending_movements|ledger_accounts|balance_transactions)\b/gi;
  for (const file of sourceFiles(SRC)) {
    if (file.startsWith(PAYMENTS) || file.startsWith(MIGRATIONS)) continue;
    const text = readFileSync(file, 'utf8');
    const relative = path.relative(SRC, file);
    for (const match of text.matchAll(writes)) offences.push(`${relative}: writes ${match[2]}`);
    for (const match of text.matchAll(
      /import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'[./]*(?:modules\/)?payments\/ledger\.js'/g,
    )) {
      const names = match[1]!
        .split(',')
        .map((name) => name.replace(/^\s*type\s+/, '').trim())
        .filter(Boolean);
      for (const name of names)
        if (!LEDGER_READS.has(name)) offences.push(`${relative}: imports ${name} from the ledger`);
    }
  }
  assert.deepEqual(offences, []);
});
