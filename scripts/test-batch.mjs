/**
 * Runs several test files in one process, one after another (scripts/run-tests.ts writes a batch
 * file per process that calls runFiles). The modules the files share (Fastify, the app, PGlite's
 * compiled WebAssembly, see test/support/database.ts) are then loaded once per process instead of
 * once per file.
 *
 * Each file is imported inside a suite named by its path, so its top-level tests and hooks
 * (`before`, `after`) belong to that suite: a file's `after` runs when its own tests are done, and
 * the files' suites run one after another, never side by side. The CPU each file uses is appended
 * to TEST_FILE_TIMES (`filecpu<TAB>seconds<TAB>file`); what is left of the process's CPU is what
 * loading the shared modules cost.
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe } from 'node:test';
import { pathToFileURL } from 'node:url';

const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/**
 * @param {string} buildDir where the compiled files are (names are shown relative to it, as sources)
 * @param {string[]} files the compiled test files, in the order to run them
 */
export function runFiles(buildDir, files) {
  const target = process.env.TEST_FILE_TIMES;
  for (const file of files) {
    const name = path.relative(buildDir, file).replace(/\.js$/, '.ts');
    describe(name, async () => {
      let startedAt = 0;
      before(() => {
        startedAt = cpuSeconds();
      });
      await import(pathToFileURL(file).href);
      // Registered after the file's own hooks, so that their CPU (closing apps, databases) counts.
      after(() => {
        if (target) appendFileSync(target, `filecpu\t${(cpuSeconds() - startedAt).toFixed(1)}\t${name}\n`);
      });
    });
  }
}
