import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { testDatabaseKind } from '../support/database.js';
import { expectStatus, startTestApp, type TestApp } from '../support/harness.js';
import { fuzz, fuzzFixtures, fuzzTarget, loadRoutes } from '../support/fuzz.js';

/**
 * One run's share: CI runs the suite on PGlite and on PostgreSQL, each sending 10,000 from seeds
 * of its own, so CI sends 20,000 different requests (issue 15); `npm run bench -- fuzz` sends
 * 200,000. FUZZ_REQUESTS and FUZZ_SEED override.
 */
const COUNT = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? (testDatabaseKind === 'pglite' ? 20261122 : 20261222));
/** The share is split over this many test files (fuzz-1 and fuzz-2), so they run side by side. */
export const FUZZ_PARTS = 2;

/**
 * One part of the fuzzing share: its own app and database, COUNT / FUZZ_PARTS requests from its
 * own seed (SEED + part), then the same checks as a whole run.
 */
export function fuzzPart(part: number): void {
  const count = Math.ceil(COUNT / FUZZ_PARTS);
  const seed = SEED + part - 1;
  describe(`fuzzing every route of openapi.json (issue 15), part ${part} of ${FUZZ_PARTS}`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({
        config: { RATE_LIMIT_TEST_PER_MINUTE: '10000000', RATE_LIMIT_LIVE_PER_MINUTE: '10000000' },
      });
    });
    afterAll(() => t.close());

    test(`${count} generated requests: no answer at or above 500, every error in the envelope; healthy after`, async () => {
      assert.ok(loadRoutes().length >= 40, 'every documented route is fuzzed');
      const fixtures = await fuzzFixtures(t);
      const report = await fuzz(fuzzTarget(t), fixtures, { count, seed });
      const statuses = [...report.byStatus.entries()].sort(([a], [b]) => a - b);
      const summary = `${report.sent} requests in ${report.elapsedMs} ms (seed ${seed}): ${statuses.map(([s, n]) => `${s}x${n}`).join(' ')}`;
      assert.deepEqual(report.failures, [], summary);
      assert.ok(report.sent >= count * 0.95, summary);
      assert.ok(
        (report.byStatus.get(200) ?? 0) + (report.byStatus.get(201) ?? 0) > 0,
        `some requests succeed: ${summary}`,
      );
      expectStatus(await t.request('GET', '/health'), 200);
      expectStatus(await t.request('GET', '/ready'), 200);
      const check = await t.admin('GET', '/ledger/check');
      expectStatus(check, 200);
      assert.equal(check.body.data.ok, true, check.text);
    });
  });
}
