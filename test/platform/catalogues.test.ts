import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'vitest';
import { errorCatalogue } from '../../src/http/errors.js';
import { eventCatalog } from '../../src/modules/events/catalog.js';
import { allScopes } from '../../src/modules/keys/scopes.js';

/**
 * The vocabularies are written once (decision 030) and their docs follow them: each catalogue
 * holds every code, scope and event the code uses, and the docs that list them list all of them.
 */

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const file = path.join(directory, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return file.endsWith('.ts') ? [file] : [];
  });
}
const source = sourceFiles('src')
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n');
const doc = (file: string) => readFileSync(file, 'utf8');

/** The month's new names (issue 47): each must be in its catalogue and its docs. */
const NEW_CODES = ['INSUFFICIENT_FUNDS', 'PAYOUT_NOT_PENDING', 'STATEMENT_PERIOD_INVALID'];
const NEW_SCOPES = ['balance:read', 'payouts:read', 'payouts:write'];
const NEW_EVENTS = ['payout.created', 'payout.paid', 'payout.failed', 'payout.cancelled'];

test('every error code the code raises is in the catalogue, and docs/errors.md lists the catalogue', () => {
  const raised = new Set([...source.matchAll(/ApiError\(\s*'([A-Z][A-Z_]+)'/g)].map((match) => match[1]!));
  assert.ok(raised.size >= 40, `${raised.size} codes raised`);
  for (const code of raised) assert.ok(code in errorCatalogue, `${code} is raised but not in src/http/errors.ts`);
  for (const code of NEW_CODES) assert.ok(code in errorCatalogue, code);

  const rows = new Map(
    [...doc('docs/errors.md').matchAll(/^\| `([A-Z_]+)` +\| (\d{3}) +\|/gm)].map((match) => [
      match[1]!,
      Number(match[2]),
    ]),
  );
  for (const [code, { status }] of Object.entries(errorCatalogue)) {
    assert.equal(rows.get(code), status, `docs/errors.md: ${code} ${status}`);
  }
  for (const code of rows.keys()) assert.ok(code in errorCatalogue, `docs/errors.md lists ${code}, not a code`);
});

test('every scope the routes and events ask for is in the scope list, and its docs list them all', () => {
  const asked = new Set([
    ...[...source.matchAll(/scope: '([a-z._]+:[a-z]+)'/g)].map((match) => match[1]!),
    ...Object.values(eventCatalog),
  ]);
  for (const scope of asked) assert.ok((allScopes as readonly string[]).includes(scope), scope);
  for (const scope of NEW_SCOPES) assert.ok((allScopes as readonly string[]).includes(scope), scope);
  for (const file of ['docs/payments.md', 'docs/admin-cli.md']) {
    const text = doc(file).replace(/\s+/g, ' ');
    for (const scope of allScopes) assert.ok(text.includes(`\`${scope}\``), `${file} lists ${scope}`);
  }
});

test('every event the code sends is in the event catalogue, and docs/webhooks.md lists each with its scope', () => {
  const sent = new Set(
    [...source.matchAll(/'((?:payment|order|product|payout|seller)\.[a-z_]+)'/g)]
      .map((match) => match[1]!)
      .filter((name) => !name.endsWith('.js') && !name.endsWith('.ts')),
  );
  for (const name of sent) assert.ok(name in eventCatalog, `${name} is used but not in src/modules/events/catalog.ts`);
  for (const name of NEW_EVENTS) assert.ok(name in eventCatalog, name);

  const rows = new Map(
    [...doc('docs/webhooks.md').matchAll(/^\| `([a-z_]+\.[a-z_]+)` +\| `([a-z._]+:[a-z]+)` +\|/gm)].map((match) => [
      match[1]!,
      match[2]!,
    ]),
  );
  for (const [name, scope] of Object.entries(eventCatalog)) {
    assert.equal(rows.get(name), scope, `docs/webhooks.md: ${name} (${scope})`);
  }
  assert.equal(rows.size, Object.keys(eventCatalog).length, 'docs/webhooks.md lists no other event');
});

test("the products export's `id` column is documented", () => {
  const text = doc('docs/catalog-and-orders.md').replace(/\s+/g, ' ');
  assert.match(text, /A row with an `id` updates that product/);
});
