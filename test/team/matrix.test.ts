import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { DASHBOARD_ROLES, type DashboardRole } from '../../src/db/schema.js';
import { dashboardAccess, recordDashboardRoute } from '../../src/modules/dashboard/plugin.js';
import { can, isPermission, type Permission } from '../../src/modules/team/permissions.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { field, type FormClient, signedIn } from '../dashboard/support.js';

/**
 * The permission table, walked (issue 53 "Proof"): every role against every dashboard route that
 * declares a permission. A GET the role may not open is the 403 page, one it may is not; a POST
 * with the session's valid CSRF token is refused with 403 before its body is read when the role
 * lacks the permission, and reaches the route (any other answer) when it holds it. Paths' ids are
 * made up: a page the role may open then answers 404, which is not 403.
 */
describe('each role x each dashboard route with a permission', () => {
  let t: TestApp;
  const members = new Map<DashboardRole, { client: FormClient; csrf: string }>();
  beforeAll(async () => {
    t = await startTestApp({
      config: {
        RATE_LIMIT_TEST_PER_MINUTE: '1000000',
        DASHBOARD_LOGIN_PER_MINUTE_IP: '1000',
        DASHBOARD_LOGIN_PER_MINUTE_EMAIL: '1000',
      },
    });
    const business = await t.createBusiness({ approveLive: false });
    for (const role of DASHBOARD_ROLES) {
      const { client } = await signedIn(t, business.id, role);
      const page = await client.get('/dashboard/settings');
      members.set(role, { client, csrf: field(page.html, '_csrf') });
    }
  });
  afterAll(() => t?.close());

  const routes = () =>
    [...dashboardAccess]
      .filter((entry): entry is [string, Permission] => isPermission(entry[1]))
      .map(([route, permission]) => {
        const [method, url] = route.split(' ') as [string, string];
        return { method, path: url.replace(/:[A-Za-z]+/g, 'x0'), permission };
      })
      .filter((route) => route.method === 'GET' || route.method === 'POST');

  test('the matrix covers every permission of the table', () => {
    assert.ok(routes().length > 40, `${routes().length} routes`);
    const declared = new Set(routes().map((route) => route.permission));
    for (const permission of ['payments.read', 'payments.refund', 'payouts.create', 'team.manage'] as const) {
      assert.ok(declared.has(permission), permission);
    }
  });

  for (const role of DASHBOARD_ROLES) {
    test(`${role}: 403 exactly where the table says no`, async () => {
      const member = members.get(role)!;
      const wrong: string[] = [];
      for (const { method, path, permission } of routes()) {
        const answer =
          method === 'GET'
            ? await member.client.get(path)
            : await member.client.post(path, { _csrf: member.csrf, _idem: `matrix-${role}-${path}`.slice(0, 64) });
        const allowed = can(role, permission);
        if (allowed ? answer.status === 403 : answer.status !== 403) {
          wrong.push(`${method} ${path} (${permission}): ${answer.status}`);
        }
        if (!allowed) assert.match(answer.html, /data-kind="role"/, `${method} ${path}`);
      }
      assert.deepEqual(wrong, []);
    });
  }
});

test('a dashboard route without its access, or with one that is no longer a word, stops the app at startup', () => {
  for (const config of [{}, { dashboard: 'owner' }, { dashboard: 'read' }, { dashboard: 'payments.fly' }]) {
    assert.throws(
      () => recordDashboardRoute({ method: 'GET', url: '/dashboard/new-page', config } as never),
      /declares its config\.dashboard access/,
      JSON.stringify(config),
    );
  }
  assert.doesNotThrow(() =>
    recordDashboardRoute({ method: 'POST', url: '/dashboard/new-page', config: { dashboard: 'team.manage' } } as never),
  );
  dashboardAccess.delete('POST /dashboard/new-page');
});
