import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { recordAudit, SYSTEM_ACTOR } from '../../src/modules/audit/record.js';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';

const SOURCES = join(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.(ts|sql|mjs)$/.test(name) ? [path] : [];
  });
}

/** Issue 53 item 4: the audit log is append-only, on the database used by this run (PGlite or PostgreSQL). */
describe('the audit log is append-only', () => {
  let t: TestApp;
  let business: TestBusiness;
  beforeAll(async () => {
    t = await startTestApp();
    business = await t.createBusiness();
    await recordAudit(t.runtime.db, {
      businessId: business.id,
      environment: null,
      action: 'settings.updated',
      actor: SYSTEM_ACTOR('append-only test'),
    });
  });
  afterAll(() => t?.close());

  test('UPDATE and DELETE are refused by the database; the entry stays as written', async () => {
    await assert.rejects(
      t.runtime.db
        .updateTable('audit_log')
        .set({ action: 'user.removed' })
        .where('business_id', '=', business.id)
        .execute(),
      /append-only/,
    );
    await assert.rejects(
      t.runtime.db.deleteFrom('audit_log').where('business_id', '=', business.id).execute(),
      /append-only/,
    );
    await assert.rejects(sql`DELETE FROM audit_log`.execute(t.runtime.db), /append-only/);
    const rows = await t.runtime.db
      .selectFrom('audit_log')
      .selectAll()
      .where('business_id', '=', business.id)
      .execute();
    assert.deepEqual(
      rows.map((row) => [row.action, row.actor_label]),
      [['settings.updated', 'append-only test']],
    );
  });

  test('no route, task or script updates or deletes an entry: the only statement on audit_log is the insert', () => {
    const touching = sourceFiles(SOURCES).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      const found = [
        ...text.matchAll(/(updateTable|deleteFrom)\(\s*'audit_log'|(UPDATE|DELETE FROM|TRUNCATE)\s+audit_log\b/g),
      ];
      return found.map((match) => `${file.slice(SOURCES.length)}: ${match[0]}`);
    });
    assert.deepEqual(touching, []);
    const inserts = sourceFiles(SOURCES).filter((file) =>
      /insertInto\(\s*'audit_log'/.test(readFileSync(file, 'utf8')),
    );
    assert.deepEqual(
      inserts.map((file) => file.slice(SOURCES.length)),
      ['/modules/audit/record.ts'],
    );
  });
});
