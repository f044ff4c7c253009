import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { issueKey } from '../../src/modules/businesses/keys.js';
import { allScopes } from '../../src/modules/keys/scopes.js';
import { expectError, expectStatus, startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';

interface Operation {
  parameters?: { in: string; name: string }[];
}
const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};

/** Every GET of the document whose query takes both `from` and `to`: the lists and exports. */
const ranged = Object.entries(document.paths)
  .filter(([, item]) => {
    const names = new Set((item.get?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name));
    return names.has('from') && names.has('to');
  })
  .map(([path]) => path);

const STATEMENTS = '/api/v1/dev/balance/statements';

/**
 * decisions.md: every list with `from`/`to` answers 400 VALIDATION_ERROR when `from` is after
 * `to` (statements, whose days are a period, answer their own STATEMENT_PERIOD_INVALID).
 */
describe('from after to', () => {
  let t: TestApp;
  let business: TestBusiness;
  /** A key of every scope: `audit:read` is never a default (decision 085). */
  let key: string;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    key = (
      await issueKey(t.runtime.db, {
        businessId: business.id,
        kind: 'secret',
        environment: 'test',
        scopes: [...allScopes],
      })
    ).key;
  });
  afterAll(() => t.close());

  test('the document has the lists that take a date range', () => {
    for (const path of [
      '/api/v1/dev/intents',
      '/api/v1/dev/store/orders',
      '/api/v1/dev/webhooks/events',
      '/api/v1/dev/balance/transactions',
      '/api/v1/dev/balance/transactions/export',
      '/api/v1/dev/payouts',
      STATEMENTS,
    ]) {
      assert.ok(ranged.includes(path), `${path} takes from and to`);
    }
  });

  test('every list and export refuses from after to, in both date forms, and takes from = to', async () => {
    for (const path of ranged) {
      const refusedCode = path === STATEMENTS ? 'STATEMENT_PERIOD_INVALID' : 'VALIDATION_ERROR';
      const queries = ['from=2026-02-01&to=2026-01-31'];
      if (path !== STATEMENTS) queries.push('from=2026-01-01T00:00:00.001Z&to=2026-01-01T00:00:00.000Z');
      for (const query of queries) {
        const refused = await t.request('GET', `${path}?${query}`, { key });
        expectError(refused, 400, refusedCode);
        assert.equal(refused.body.error.details?.[0]?.field, 'query.from', `${path}?${query}: ${refused.text}`);
      }
      const same = await t.request('GET', `${path}?from=2026-01-31&to=2026-01-31`, { key });
      expectStatus(same, 200);
    }
  });

  test('a date that does not exist is still refused first, as the route reads it', async () => {
    for (const path of ranged.filter((p) => p !== STATEMENTS)) {
      const refused = await t.request('GET', `${path}?from=2026-02-30&to=2026-01-01`, {
        key,
      });
      expectError(refused, 400, 'VALIDATION_ERROR');
      assert.match(refused.body.error.message, /query\.from is not a valid date/);
    }
  });
});
