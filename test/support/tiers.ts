/**
 * Two tiers. `npm test` runs the quick one: every feature, error code, race (on PostgreSQL) and
 * money check. The slow tier adds what takes minutes of wall time for little extra coverage per
 * second: the real browser, the 10,000-request fuzzing, and the tests that start whole server
 * processes or install packages. `.ci/run` (CI=true) and `npm run test:all` run both.
 */
export const SLOW_TIER: readonly string[] = [
  'test/browser/**',
  'test/hardening/fuzz-*.test.ts',
  'test/platform/server-process.test.ts',
  'test/platform/multi-process.test.ts',
  'test/platform/database-image.test.ts',
  'test/platform/quick-start.test.ts',
  'test/platform/readme-tour.test.ts',
  'test/sdk/package.test.ts',
];

export const runsSlowTier = (env: NodeJS.ProcessEnv = process.env): boolean =>
  env.CI === 'true' || env.TEST_TIER === 'all';
