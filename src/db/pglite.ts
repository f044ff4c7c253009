import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, openAsBlob, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { Mutex } from '../lib/mutex.js';
import { statementLog, type Database, type DriverOptions, type PreparedStatement } from './database.js';
import { PGliteDialect, queryNamed } from './pglite-dialect.js';
import type { DB } from './schema.js';

/**
 * PGlite's own start parameters, with a smaller buffer pool: PostgreSQL's default of 128 MB sits
 * in the process's WebAssembly memory, while the data files are also in the OS page cache (PGlite
 * reads them through Node). 16 MB took a process loaded with 100,000 rows from 466 to 380 MB.
 */
const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/**
 * Creates a new data directory (initdb) in a child process. The instance that creates it holds
 * some 350 MB it no longer needs once done; run in this process it stayed until a full garbage
 * collection happened to run (633 MB after reopening the directory, 285 MB once collected), and
 * run in a worker thread the process still held 331 MB once the thread ended (the allocator keeps
 * what the thread freed), against 195 MB when opening an existing directory. A process gives
 * everything back when it exits.
 */
async function createDataDirectory(dataDir: string, initDbStartParams: string[] | undefined): Promise<void> {
  const settings = JSON.stringify({
    module: import.meta.resolve('@electric-sql/pglite'),
    options: { dataDir, startParams: EMBEDDED_START_PARAMS, ...(initDbStartParams ? { initDbStartParams } : {}) },
  });
  // Source, not a file: the same text runs from src/ (tsx) and dist/ (plain Node).
  const source = `
    const { module, options } = JSON.parse(process.env.PGLITE_CREATE);
    const { PGlite } = await import(module);
    const created = await PGlite.create(options);
    await created.close();`;
  const child = spawn(process.execPath, ['--input-type=module', '--eval', source], {
    env: { ...process.env, PGLITE_CREATE: settings },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`creating the embedded database failed (exit code ${code}): ${stderr.trim()}`);
}

/**
 * Opens a new data directory unpacked from the build's database image (image.ts) instead of
 * running initdb. In this process, unlike initdb: unpacking needs no second instance (a first
 * start peaked at 370 MB, against 740-780 MB with initdb's child), and what it leaves, some 90 MB
 * of the tarball's buffers, is garbage the next full collection frees. Undefined when the image
 * would not load: the directory is then emptied again (it was empty before), for the usual way.
 */
async function openFromImage(
  dataDir: string,
  image: DatabaseImageSource,
  more: PGliteSettings['pglite'],
): Promise<PGlite | undefined> {
  try {
    return await PGlite.create({
      dataDir,
      loadDataDir: await openAsBlob(image.tarball),
      startParams: EMBEDDED_START_PARAMS,
      ...more,
    });
  } catch (error) {
    image.onFailed?.(error);
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
    return undefined;
  }
}

/** A database image to unpack into a new data directory (see image.ts). */
export interface DatabaseImageSource {
  tarball: string;
  /** Hears why the image would not load; the directory is then created the usual way. */
  onFailed?: (error: unknown) => void;
}

export interface PGliteSettings {
  dataDir?: string;
  loadDataDir?: Blob;
  /** Where a new (empty) data directory is unpacked from instead of initdb; ignored for an existing one. */
  image?: DatabaseImageSource;
  /**
   * More PGlite settings. Tests use it to share one compiled WebAssembly module and file
   * bundle among the databases of a process, and for the template's smaller WAL segment.
   */
  pglite?: Pick<PGliteOptions, 'pgliteWasmModule' | 'fsBundle' | 'initDbStartParams'>;
  /**
   * An open PGlite to use instead of opening one: tests hand each file a reset instance,
   * since opening one costs about a second of CPU. Closing the Database closes it.
   */
  instance?: PGlite;
}

export async function openPGlite(options: PGliteSettings & DriverOptions): Promise<Database> {
  const namedStatements = options.namedStatements ?? true;
  let dataDir = options.dataDir;
  let creating = false;
  if (dataDir && !dataDir.startsWith('memory://')) {
    dataDir = path.resolve(dataDir);
    creating = !existsSync(dataDir) || readdirSync(dataDir).length === 0;
    mkdirSync(dataDir, { recursive: true });
  }
  let opened = options.instance;
  if (!opened && creating && dataDir && options.image)
    opened = await openFromImage(dataDir, options.image, options.pglite);
  if (!opened) {
    // A template or a compiled module (tests) cannot cross to another process: the instance below
    // creates the directory itself then.
    const separately = !options.loadDataDir && !options.pglite?.pgliteWasmModule;
    if (creating && dataDir && separately) await createDataDirectory(dataDir, options.pglite?.initDbStartParams);
    opened = await PGlite.create({
      ...(dataDir ? { dataDir } : {}),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      startParams: EMBEDDED_START_PARAMS,
      ...options.pglite,
    });
  }
  const pglite = opened;
  const mutex = new Mutex();
  const log = statementLog(options.onStatement);
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite, mutex, namedStatements), ...(log ? { log } : {}) });
  return {
    kind: 'pglite',
    db,
    pglite,
    poolStats: () => ({
      max: 1,
      inUse: mutex.pending > 0 ? 1 : 0,
      idle: mutex.pending > 0 ? 0 : 1,
      waiting: Math.max(0, mutex.pending - 1),
    }),
    async query<R>(statement: PreparedStatement, values: unknown[]) {
      const release = await mutex.lock();
      try {
        const result = namedStatements
          ? await queryNamed<R>(pglite, statement.text, values)
          : await pglite.query<R>(statement.text, values);
        return result.rows;
      } finally {
        release();
      }
    },
    async inScriptTransaction(work) {
      const release = await mutex.lock();
      try {
        return await pglite.transaction(async (tx) =>
          work(async (sql) => {
            const results = await tx.exec(sql);
            return (results[results.length - 1]?.rows ?? []) as Record<string, unknown>[];
          }),
        );
      } finally {
        release();
      }
    },
    async listen(channel, onNotify) {
      // Under the lock: LISTEN inside someone's open transaction would be undone by its rollback.
      const release = await mutex.lock();
      let unlisten: () => Promise<void>;
      try {
        unlisten = await pglite.listen(channel, (payload) => onNotify(payload));
      } finally {
        release();
      }
      return {
        async close() {
          const again = await mutex.lock();
          try {
            if (!pglite.closed) await unlisten();
          } finally {
            again();
          }
        },
      };
    },
    async close() {
      await db.destroy();
      // Kysely closes the driver only if it used it; migrations alone go around Kysely.
      const release = await mutex.lock();
      try {
        if (!pglite.closed) await pglite.close();
      } finally {
        release();
      }
    },
  };
}
