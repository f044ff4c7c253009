import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { testDatabaseKind } from '../support/database.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { hiddenFields, signedIn } from '../dashboard/support.js';
import { TEAM } from './support.js';

const ROUNDS = 12;

/**
 * Two owners demoting (or removing) each other at once (issue 53 "Bad input and abuse"): the
 * change locks the business's members, so one wins and the other is refused (its sender no longer
 * holds team.manage, or would leave no owner). Never zero owners. On PostgreSQL the two requests
 * really overlap; PGlite runs them one after the other, which must hold too.
 */
describe(`two owners demoting each other at once (${testDatabaseKind})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '1000000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '10000',
        DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000',
      },
    });
  });
  afterAll(() => t?.close());

  test(`${ROUNDS} rounds: exactly one change each, one owner left`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const business = await t.createBusiness({ approveLive: false });
      const a = await signedIn(t, business.id);
      const b = await signedIn(t, business.id);
      const act = round % 2 === 0 ? 'role' : 'remove';
      const [pathA, pathB] = [`${TEAM}/members/${b.user.id}/${act}`, `${TEAM}/members/${a.user.id}/${act}`];
      const [formA, formB] = await Promise.all([
        a.client.get(TEAM).then((page) => hiddenFields(page.html, pathA)),
        b.client.get(TEAM).then((page) => hiddenFields(page.html, pathB)),
      ]);
      const extra: Record<string, string> = act === 'role' ? { role: 'viewer' } : {};
      const answers = await Promise.all([
        a.client.post(pathA, { ...formA, ...extra }),
        b.client.post(pathB, { ...formB, ...extra }),
      ]);
      const outcomes = answers.map((answer) => answer.location?.split('?')[1] ?? String(answer.status)).sort();
      assert.equal(outcomes.filter((outcome) => outcome === 'notice=done').length, 1, `round ${round}: ${outcomes}`);
      // The loser is refused under the lock (ROLE_NOT_ALLOWED, LAST_OWNER), by its session's new
      // role (403), or, removed, by its ended session (sent to sign in).
      const loser = outcomes.find((outcome) => outcome !== 'notice=done')!;
      assert.ok(
        ['error=ROLE_NOT_ALLOWED', 'error=LAST_OWNER', '403', 'next=%2Fdashboard&notice=ended'].includes(loser),
        loser,
      );
      const owners = await t.runtime.db
        .selectFrom('dashboard_users')
        .select('id')
        .where('business_id', '=', business.id)
        .where('role', '=', 'owner')
        .where('disabled_at', 'is', null)
        .execute();
      assert.equal(owners.length, 1, `round ${round}`);
    }
  });
});
