import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { errorCatalogue } from '../../src/http/errors.js';

// The contract lives beside the checkout; a clone elsewhere (CI) finds it through CONTRACT_DIR
// or at the workspace's usual place.
const specDir =
  [process.env.CONTRACT_DIR, path.resolve('..', 'shared', 'spec'), '/work/shared/spec'].find(
    (dir): dir is string => dir !== undefined && existsSync(path.join(dir, 'api.md')),
  ) ?? path.resolve('..', 'shared', 'spec');

/** Rows `| CODE | status | ... |` of a markdown table whose first cell is an upper-case code. */
function codeRows(markdown: string): Map<string, number> {
  const rows = new Map<string, number>();
  for (const line of markdown.split('\n')) {
    const match = /^\s*\|\s*`?([A-Z][A-Z_]+)`?\s*\|\s*(\d{3})\s*\|/.exec(line);
    if (match?.[1] && match[2]) rows.set(match[1], Number(match[2]));
  }
  return rows;
}

test('every code of api.md section 7 and decisions.md has the status the contract gives', (t) => {
  const apiFile = path.join(specDir, 'api.md');
  if (!existsSync(apiFile)) {
    t.skip(`contract not found at ${apiFile}`);
    return;
  }
  const api = readFileSync(apiFile, 'utf8');
  const section7 = api.slice(api.indexOf('## 7. Errors'), api.indexOf('## 8. Limits'));
  const decisions = readFileSync(path.join(specDir, 'decisions.md'), 'utf8');
  const contract = new Map([...codeRows(section7), ...codeRows(decisions)]);
  assert.ok(contract.size >= 45, `parsed only ${contract.size} codes from the contract`);
  for (const [code, status] of contract) {
    const entry = (errorCatalogue as Record<string, { status: number }>)[code];
    assert.ok(entry, `${code} is missing from the catalogue`);
    assert.equal(entry.status, status, `${code}: catalogue says ${entry.status}, contract says ${status}`);
  }
});

test('CODE_SPACE_EXHAUSTED is 503 as decisions.md says in prose', () => {
  assert.equal(errorCatalogue.CODE_SPACE_EXHAUSTED.status, 503);
});
