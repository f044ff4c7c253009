import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import { ADMIN_TOKEN, expectError, expectStatus, sendRequest, startTestApp, type TestApp } from '../support/harness.js';

interface IssuedKeyAnswer {
  id: string;
  kind: string;
  environment: string;
  hint: string;
  key?: string;
}

const kinds = (keys: IssuedKeyAnswer[]) => keys.map((key) => `${key.kind}/${key.environment}`).sort();

describe('operator API and CLI: business list, live keys on approval', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** An operator write with an idempotency key, as the CLI sends it. */
  const adminWrite = (method: string, path: string, key: string, body?: unknown) =>
    sendRequest(t.baseUrl, method, `/api/v1/admin${path}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      idempotencyKey: key,
      ...(body !== undefined ? { body } : {}),
    });
  const intents = (key: string) => t.request('GET', '/api/v1/dev/intents', { key });

  test('GET /businesses lists every business, newest first, a page at a time', async () => {
    const names = ['List A', 'List B', 'List C'].map((name) => `${name} ${Date.now()}`);
    const ids: string[] = [];
    for (const name of names) ids.push((await t.createBusiness({ name, approveLive: name.startsWith('List B') })).id);

    const first = await t.admin('GET', '/businesses?limit=2');
    expectStatus(first, 200);
    const page = first.body.data;
    assert.equal(page.page, 1);
    assert.equal(page.limit, 2);
    assert.ok(page.total >= 3);
    assert.equal(page.hasMore, true);
    assert.deepEqual(
      page.items.map((item: { id: string }) => item.id),
      [ids[2], ids[1]],
    );
    const listedB = page.items[1];
    assert.deepEqual(Object.keys(listedB).sort(), [
      'apiEnabled',
      'createdAt',
      'id',
      'liveApproved',
      'liveRequestedAt',
      'name',
      'verifiedName',
    ]);
    assert.equal(listedB.name, names[1]);
    // Approved live at creation: the name it was approved under is the one payers see (migration 040).
    assert.equal(listedB.verifiedName, names[1]);
    assert.equal(listedB.liveApproved, true);
    assert.equal(listedB.apiEnabled, true);
    assert.equal(listedB.liveRequestedAt, null);
    assert.match(listedB.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(page.items[0].liveApproved, false);

    const second = await t.admin('GET', '/businesses?limit=2&page=2');
    expectStatus(second, 200);
    assert.equal(second.body.data.items[0].id, ids[0]);

    expectError(await t.admin('GET', '/businesses?limit=0'), 400, 'VALIDATION_ERROR');
    expectError(await t.admin('GET', '/businesses?sort=name'), 400, 'VALIDATION_ERROR');
    const noToken = await sendRequest(t.baseUrl, 'GET', '/api/v1/admin/businesses');
    expectError(noToken, 401, 'ADMIN_UNAUTHORIZED');
  });

  test('left out, liveKeys follows approveLive, as the CLI: sandbox keys only until approve-live issues the live ones once', async () => {
    // Before issue 54 the operator API issued live keys by default, unlike the CLI.
    const created = await adminWrite('POST', '/businesses', 'live-later-create', { name: 'Live later' });
    expectStatus(created, 201);
    const business = created.body.data.business;
    assert.equal(business.liveApproved, false);
    assert.deepEqual(kinds(created.body.data.keys), ['publishable/test', 'secret/test']);
    const listed = await t.admin('GET', `/keys?businessId=${business.id}`);
    assert.deepEqual(kinds(listed.body.data.items), ['publishable/test', 'secret/test']);

    const approved = await adminWrite('POST', `/businesses/${business.id}/approve-live`, 'live-later-approve');
    expectStatus(approved, 200);
    assert.equal(approved.body.data.liveApproved, true);
    const liveKeys = approved.body.data.keys as IssuedKeyAnswer[];
    assert.deepEqual(kinds(liveKeys), ['publishable/live', 'secret/live']);
    const secretLive = liveKeys.find((key) => key.kind === 'secret')!.key!;
    assert.match(secretLive, /^sk_live_/);
    expectStatus(await intents(secretLive), 200);

    // A replay answers the same approval without the key texts: they are shown once.
    const replayed = await adminWrite('POST', `/businesses/${business.id}/approve-live`, 'live-later-approve');
    expectStatus(replayed, 200);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(
      (replayed.body.data.keys as IssuedKeyAnswer[]).map((key) => [key.id, key.hint, key.key]),
      liveKeys.map((key) => [key.id, key.hint, undefined]),
    );
    // Approving again issues nothing: the business has its live keys.
    const again = await adminWrite('POST', `/businesses/${business.id}/approve-live`, 'live-later-approve-2');
    expectStatus(again, 200);
    assert.deepEqual(again.body.data.keys, []);
    const all = await t.admin('GET', `/keys?businessId=${business.id}`);
    assert.equal(all.body.data.items.length, 4);

    expectError(await adminWrite('POST', '/businesses/biz_missing/approve-live', 'live-missing'), 404, 'NOT_FOUND');

    // Approved at creation: the live keys come with it. Asked for, an unapproved one gets them too.
    const approvedNow = await adminWrite('POST', '/businesses', 'live-now-create', {
      name: 'Live now',
      approveLive: true,
    });
    assert.deepEqual(kinds(approvedNow.body.data.keys), [
      'publishable/live',
      'publishable/test',
      'secret/live',
      'secret/test',
    ]);
    const asked = await adminWrite('POST', '/businesses', 'live-asked-create', { name: 'Asked', liveKeys: true });
    assert.equal(asked.body.data.business.liveApproved, false);
    assert.deepEqual(kinds(asked.body.data.keys), [
      'publishable/live',
      'publishable/test',
      'secret/live',
      'secret/test',
    ]);
  });

  test('a business created with its live keys keeps them at approval, and they start working', async () => {
    const business = await t.createBusiness({ approveLive: false });
    expectError(await intents(business.keys.secretLive), 403, 'LIVE_ACCESS_NOT_APPROVED');
    const approved = await t.admin('POST', `/businesses/${business.id}/approve-live`);
    expectStatus(approved, 200);
    assert.deepEqual(approved.body.data.keys, []);
    expectStatus(await intents(business.keys.secretLive), 200);
  });

  test('CLI: business create prints sandbox keys only without --approve-live, approve-live prints the live ones', async () => {
    const created = await adminCli(t, 'business', 'create', '--name', 'CLI later');
    assert.equal(created.code, 0, created.stderr);
    const output = JSON.parse(created.stdout);
    assert.deepEqual(kinds(output.keys), ['publishable/test', 'secret/test']);
    assert.doesNotMatch(created.stdout, /_live_/);
    const id = output.business.id as string;
    assert.match(created.stderr, new RegExp(`business approve-live ${id}`));

    const approved = await adminCli(t, 'business', 'approve-live', id, '--json');
    assert.equal(approved.code, 0, approved.stderr);
    const liveKeys = JSON.parse(approved.stdout).keys as IssuedKeyAnswer[];
    assert.deepEqual(kinds(liveKeys), ['publishable/live', 'secret/live']);
    expectStatus(await intents(liveKeys.find((key) => key.kind === 'secret')!.key!), 200);

    const withLive = await adminCli(t, 'business', 'create', '--name', 'CLI live', '--approve-live', '--json');
    assert.equal(withLive.code, 0, withLive.stderr);
    assert.equal(JSON.parse(withLive.stdout).keys.length, 4);
    assert.equal(withLive.stderr, '');
  });

  test('CLI: business list prints a table, or the page as JSON with --json', async () => {
    const name = `Table shop ${Date.now()}`;
    const business = await t.createBusiness({ name, approveLive: false });
    const table = await adminCli(t, 'business', 'list', '--limit', '1');
    assert.equal(table.code, 0, table.stderr);
    const [header, row, blank, footer] = table.stdout.trimEnd().split('\n');
    assert.match(header!, /^ID +NAME +LIVE +API +CREATED$/);
    assert.match(row!, new RegExp(`^${business.id} +${name} +no +on +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`));
    assert.equal(blank, '');
    assert.match(footer!, /^1-1 of \d+, newest first; --page 2 for the next 1$/);

    const json = await adminCli(t, 'business', 'list', '--limit', '1', '--page', '1', '--json');
    assert.equal(json.code, 0, json.stderr);
    const page = JSON.parse(json.stdout);
    assert.equal(page.items[0].id, business.id);
    assert.equal(page.hasMore, true);

    const badLimit = await adminCli(t, 'business', 'list', '--limit', 'ten');
    assert.equal(badLimit.code, 2);
    assert.match(badLimit.stderr, /--limit must be a whole number/);
    const tooSmall = await adminCli(t, 'business', 'list', '--limit', '0', '--json');
    assert.equal(tooSmall.code, 1);
    assert.equal(JSON.parse(tooSmall.stderr).error.code, 'VALIDATION_ERROR');
  });
});
