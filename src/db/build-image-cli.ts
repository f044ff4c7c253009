/**
 * `node dist/db/build-image-cli.js`, run by scripts/build.mjs after compiling: makes the database
 * image (image.ts) from the migrations, or keeps the one there when it is current. Exits non-zero
 * when it could not; the build then warns and goes on (first starts create the database the slow way).
 */
import path from 'node:path';
import { buildDatabaseImage, IMAGE_DIR } from './image.js';

const startedAt = performance.now();
try {
  const { kept, bytes } = await buildDatabaseImage();
  const size = `${(bytes / 1_000_000).toFixed(1)} MB`;
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  process.stdout.write(
    kept
      ? `build: kept the database image in ${path.relative(process.cwd(), IMAGE_DIR)} (${size}, the migrations are unchanged)\n`
      : `build: made the database image in ${path.relative(process.cwd(), IMAGE_DIR)} (${size}, ${seconds} s)\n`,
  );
  // PGlite can leave a handle open after close(); the work is done, so leave explicitly.
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
