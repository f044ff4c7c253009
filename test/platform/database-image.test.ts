/**
 * The database image (src/db/image.ts) a first start unpacks instead of initdb and the migrations:
 * a database loaded from it is the database the migrations make from scratch, and an image that
 * is missing, stale or broken leads to the usual way, with the same result.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import type { Database } from '../../src/db/connect.js';
import { buildDatabaseImage, findDatabaseImage, type DatabaseImage } from '../../src/db/image.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { openPGlite } from '../../src/db/pglite.js';

/** What the migrations define, read from the catalogs, in an order that does not depend on oids. */
async function schemaOf(database: Database): Promise<Record<string, unknown[]>> {
  const rows = async (text: string) => (await database.pglite!.query<Record<string, unknown>>(text)).rows;
  const tables = await rows(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`);
  const counts: unknown[] = [];
  for (const { relname } of tables)
    counts.push({
      table: relname,
      rows: (await rows(`SELECT count(*)::int AS n FROM public."${String(relname)}"`))[0]!.n,
    });
  return {
    migrations: await rows('SELECT version FROM schema_migrations ORDER BY version'),
    columns:
      await rows(`SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity, is_generated
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`),
    constraints: await rows(`SELECT c.conrelid::regclass::text AS on, c.conname, pg_get_constraintdef(c.oid) AS def
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' ORDER BY 1, 2`),
    indexes: await rows(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`),
    functions: await rows(`SELECT p.proname, pg_get_functiondef(p.oid) AS def FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1, 2`),
    triggers: await rows(`SELECT t.tgname, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t
      JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND NOT t.tgisinternal ORDER BY 1, 2`),
    views: await rows(`SELECT viewname, definition FROM pg_views WHERE schemaname = 'public' ORDER BY 1`),
    types: await rows(`SELECT t.typname, t.typtype, array_to_string(ARRAY(SELECT e.enumlabel FROM pg_enum e
      WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder), ',') AS labels FROM pg_type t
      JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'public' AND t.typtype IN ('e', 'd', 'c')
      ORDER BY 1`),
    sequences: await rows(`SELECT sequencename, data_type, start_value, increment_by, last_value
      FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1`),
    settings: await rows(`SELECT name, setting FROM pg_settings
      WHERE name IN ('server_version', 'server_encoding', 'lc_collate', 'lc_ctype', 'TimeZone', 'wal_segment_size')
      ORDER BY 1`),
    rowCounts: counts,
  };
}

describe('the database image', () => {
  let work: string;
  let image: DatabaseImage;
  let imageDir: string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'devapi-image-'));
    // The build's own image when it is there and current (what `npm start` uses), else one made now.
    const built = findDatabaseImage();
    if (built.image) image = built.image;
    else {
      await buildDatabaseImage(path.join(work, 'built'));
      image = findDatabaseImage(path.join(work, 'built')).image!;
    }
    imageDir = path.dirname(image.tarball);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  test('holds every migration, and a database loaded from it has the schema and rows of one migrated from scratch', async () => {
    assert.deepEqual(
      image.migrations,
      listMigrations().map((migration) => migration.version),
    );
    const loaded = await openPGlite({ dataDir: path.join(work, 'loaded'), image: { tarball: image.tarball } });
    const fromScratch = await openPGlite({});
    try {
      assert.deepEqual(await migrate(loaded), [], 'nothing left to apply');
      assert.equal((await migrate(fromScratch)).length, listMigrations().length);
      const schema = await schemaOf(fromScratch);
      assert.ok(schema.columns!.length > 100 && schema.functions!.length > 0 && schema.indexes!.length > 20);
      assert.deepEqual(await schemaOf(loaded), schema);
    } finally {
      await loaded.close();
      await fromScratch.close();
    }
  });

  test('an image missing a newer migration is used (the migrator applies the rest); a changed or removed one is stale', () => {
    const copy = (name: string, edit: (manifest: { migrations: { version: string; sha256: string }[] }) => void) => {
      const dir = path.join(work, name);
      cpSync(imageDir, dir, { recursive: true });
      const file = path.join(dir, 'manifest.json');
      const manifest = JSON.parse(readFileSync(file, 'utf8'));
      edit(manifest);
      writeFileSync(file, JSON.stringify(manifest));
      return dir;
    };
    const older = findDatabaseImage(copy('older', (manifest) => manifest.migrations.pop()));
    assert.equal(older.image?.migrations.length, listMigrations().length - 1);

    const changed = findDatabaseImage(copy('changed', (manifest) => (manifest.migrations[0]!.sha256 = '0'.repeat(64))));
    assert.match(changed.missing ?? '', /migration 001_platform changed since the database image was made/);
    const removed = findDatabaseImage(
      copy('removed', (manifest) => manifest.migrations.push({ version: '999_gone', sha256: '0'.repeat(64) })),
    );
    assert.match(removed.missing ?? '', /holds migration 999_gone, since removed/);
    const otherPGlite = findDatabaseImage(copy('pglite', (manifest) => Object.assign(manifest, { pglite: '0.0.1' })));
    assert.match(otherPGlite.missing ?? '', /of PGlite 0\.0\.1/);
    assert.match(findDatabaseImage(path.join(work, 'nowhere')).missing ?? '', /no database image/);
  });

  test('a broken image is reported and the database is created the usual way', async () => {
    const broken = path.join(work, 'broken.tar.gz');
    writeFileSync(broken, 'not a tarball');
    const failures: unknown[] = [];
    const database = await openPGlite({
      dataDir: path.join(work, 'fallback'),
      image: { tarball: broken, onFailed: (error) => failures.push(error) },
    });
    try {
      assert.equal(failures.length, 1);
      assert.equal((await migrate(database)).length, listMigrations().length);
    } finally {
      await database.close();
    }
  });
});
