/**
 * Two tiers. `npm test` runs the quick one: every feature, error code, race (on PostgreSQL) and
 * money check. The slow tier adds what takes minutes of wall time for little extra coverage per
 * second: the real browser, the 10,000-request fuzzing, a 10,000-delivery webhook recover, and the
 * tests that start whole server processes or install packages. `npm run test:all` runs both; `.ci/run` runs the quick tier on
 * PGlite beside a CPU hog and both tiers on PostgreSQL.
 */
export const SLOW_TIER: readonly string[] = [
  'test/browser/**',
  'test/hardening/fuzz-*.test.ts',
  'test/platform/server-process.test.ts',
  'test/platform/multi-process.test.ts',
  'test/platform/pgbouncer.test.ts',
  'test/platform/database-image.test.ts',
  'test/platform/quick-start.test.ts',
  'test/platform/readme-tour.test.ts',
  'test/platform/stalled-downloads-server.test.ts',
  'test/sdk/package.test.ts',
  'test/webhooks/recover-at-scale.test.ts',
];

/** `TEST_TIER=all` or `quick` chooses; otherwise CI runs both tiers and a person the quick one. */
export const runsSlowTier = (env: NodeJS.ProcessEnv = process.env): boolean =>
  env.TEST_TIER ? env.TEST_TIER === 'all' : env.CI === 'true';
