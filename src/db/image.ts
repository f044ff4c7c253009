import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listMigrations, migrate } from './migrate.js';

/**
 * The database image: a PGlite data directory made by running every migration at build time
 * (`npm run build`, also run by `npm install`), as a tarball. A first start unpacks it instead of
 * running PGlite's initdb and every migration, which took most of a first start (initdb alone
 * some 6 s of CPU); the migrator then applies whatever migration is newer than the image.
 * It lives in dist/ (ignored by git, made again from the migrations by every build whose
 * migrations changed), found from src/ (tsx) and dist/ alike: both sit two levels under the root.
 */
export const IMAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'pglite-image');
const TARBALL = 'pgdata.tar.gz';
const MANIFEST = 'manifest.json';
/** Bumped when what an image holds or how it is written changes: older images are then stale. */
const IMAGE_FORMAT = 1;

interface ImageManifest {
  format: number;
  /** The PGlite release that wrote it: another one may not read its catalog. */
  pglite: string;
  /** Every migration the image holds, with a hash of its SQL. */
  migrations: { version: string; sha256: string }[];
  /** A hash of the code that made it (the migrator and this module), so a build remakes it when they change. */
  builder: string;
}

export interface DatabaseImage {
  tarball: string;
  migrations: string[];
}

export type ImageLookup = { image: DatabaseImage; missing?: undefined } | { image?: undefined; missing: string };

function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

export function installedPGliteVersion(): string {
  const packageJson = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
  return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
}

function currentMigrations(): ImageManifest['migrations'] {
  return listMigrations().map((migration) => ({ version: migration.version, sha256: sha256(migration.sql) }));
}

function builderHash(): string {
  const migrator = fileURLToPath(new URL(`./migrate${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  return sha256(readFileSync(migrator, 'utf8') + readFileSync(fileURLToPath(import.meta.url), 'utf8'));
}

function readManifest(dir: string): ImageManifest | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, MANIFEST), 'utf8')) as ImageManifest;
  } catch {
    return undefined;
  }
}

/**
 * The image to create a new embedded database from, or why there is none usable. A stale image
 * (another PGlite, a migration it holds changed or gone) is refused: the database is then made
 * the slow way, with the same result. Migrations newer than the image are fine: they are applied.
 */
export function findDatabaseImage(dir = IMAGE_DIR): ImageLookup {
  const manifest = readManifest(dir);
  const tarball = path.join(dir, TARBALL);
  if (!manifest || !existsSync(tarball)) return { missing: 'no database image (npm run build makes one)' };
  if (manifest.format !== IMAGE_FORMAT) return { missing: 'the database image is of an older format' };
  const pglite = installedPGliteVersion();
  if (manifest.pglite !== pglite)
    return { missing: `the database image is of PGlite ${manifest.pglite}, not ${pglite}` };
  const now = new Map(currentMigrations().map((migration) => [migration.version, migration.sha256]));
  for (const held of manifest.migrations) {
    const hash = now.get(held.version);
    if (hash === undefined) return { missing: `the database image holds migration ${held.version}, since removed` };
    if (hash !== held.sha256) return { missing: `migration ${held.version} changed since the database image was made` };
  }
  return { image: { tarball, migrations: manifest.migrations.map((migration) => migration.version) } };
}

/** Whether the image in `dir` is what a build would make now, so the build can keep it. */
function imageIsCurrent(dir: string, wanted: ImageManifest): boolean {
  const manifest = readManifest(dir);
  return (
    manifest !== undefined && existsSync(path.join(dir, TARBALL)) && JSON.stringify(manifest) === JSON.stringify(wanted)
  );
}

/**
 * Makes the image in `dir` from the migrations (an in-memory PGlite, initdb with the defaults a
 * first start uses, then the migrator), unless the one there is current. The manifest is
 * written last: an interrupted build leaves no image rather than a broken one.
 */
export async function buildDatabaseImage(dir = IMAGE_DIR): Promise<{ kept: boolean; bytes: number }> {
  const wanted: ImageManifest = {
    format: IMAGE_FORMAT,
    pglite: installedPGliteVersion(),
    migrations: currentMigrations(),
    builder: builderHash(),
  };
  if (imageIsCurrent(dir, wanted)) return { kept: true, bytes: readFileSync(path.join(dir, TARBALL)).length };
  rmSync(dir, { recursive: true, force: true });
  // Loaded here, not with this module: a server on PostgreSQL reads the image's lookup too.
  const { openPGlite } = await import('./pglite.js');
  const database = await openPGlite({});
  let tarball: Buffer;
  try {
    const applied = await migrate(database);
    if (applied.length !== wanted.migrations.length) throw new Error(`applied ${applied.length} migrations`);
    // Written to the data files now, so opening the image has no WAL to replay.
    await database.pglite!.exec('CHECKPOINT');
    tarball = Buffer.from(await (await database.pglite!.dumpDataDir('gzip')).arrayBuffer());
  } finally {
    await database.close();
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, TARBALL), tarball);
  const partial = path.join(dir, `${MANIFEST}.partial`);
  writeFileSync(partial, `${JSON.stringify(wanted, null, 2)}\n`);
  renameSync(partial, path.join(dir, MANIFEST));
  return { kept: false, bytes: tarball.length };
}
