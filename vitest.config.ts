import { configDefaults, defineConfig } from 'vitest/config';
import { TIME_FACTOR } from './test/support/patience.js';
import { runsSlowTier, SLOW_TIER } from './test/support/tiers.js';

/**
 * `npm test`. Test files share a few long-lived worker processes (isolate: false), so the modules
 * they all load (Fastify, the app, PGlite's WebAssembly: test/support/database.ts) are loaded once
 * per worker, not once per file: a file alone in a fresh process costs about 6 s of CPU before its
 * first test. Each file still gets its own app and database. docs/decisions/049-test-suite.md.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: runsSlowTier() ? configDefaults.exclude : [...configDefaults.exclude, ...SLOW_TIER],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    isolate: false,
    // Much of a file's time is waiting (HTTP, workers, child processes): more workers than cores
    // keep both busy, but each holds its own PGlite instances.
    maxWorkers: Number(process.env.TEST_CONCURRENCY ?? 4),
    // V8's optimizing compile of PGlite's large WebAssembly module costs more CPU than it saves here.
    execArgv: ['--liftoff-only'],
    // A file's hooks run in the order written (node:test's order), after-hooks included.
    sequence: { hooks: 'list' },
    // Limits for a hung test, not for a slow one: every real wait has its own (test/support/patience.ts).
    testTimeout: 180_000 * TIME_FACTOR,
    hookTimeout: 180_000 * TIME_FACTOR,
    teardownTimeout: 30_000 * TIME_FACTOR,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
