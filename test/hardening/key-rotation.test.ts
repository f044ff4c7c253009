import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { expectError, expectStatus, startTestApp, type TestApp } from '../support/harness.js';

const BALANCE = '/api/v1/dev/balance';

describe('rotating a suspended key is refused (issue 15 item 8)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  test('suspended: API_KEY_NOT_ACTIVE, no successor, the key stays suspended', async () => {
    const business = await t.createBusiness();
    const record = business.keyRecords.find((k) => k.kind === 'secret' && k.environment === 'test')!;
    expectStatus(await t.admin('POST', `/keys/${record.id}/suspend`), 200);
    const before = await t.admin('GET', `/keys?businessId=${business.id}`);
    const rotated = await t.admin('POST', `/keys/${record.id}/rotate`);
    expectError(rotated, 409, 'API_KEY_NOT_ACTIVE');
    const afterList = await t.admin('GET', `/keys?businessId=${business.id}`);
    assert.equal(afterList.text, before.text, 'no key was added or changed');
    expectError(await t.request('GET', BALANCE, { key: record.key }), 403, 'API_ACCESS_NOT_ACTIVE');
  });

  test('an active key still rotates; its successor works and the old text does not', async () => {
    const business = await t.createBusiness();
    const record = business.keyRecords.find((k) => k.kind === 'secret' && k.environment === 'test')!;
    const rotated = await t.admin('POST', `/keys/${record.id}/rotate`);
    expectStatus(rotated, 201);
    expectStatus(await t.request('GET', BALANCE, { key: rotated.body.data.key }), 200);
    expectError(await t.request('GET', BALANCE, { key: record.key }), 401, 'INVALID_API_KEY');
  });
});
