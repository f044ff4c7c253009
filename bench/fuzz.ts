/**
 * `npm run bench -- fuzz`: the large fuzz run of issue 15, 200,000 schema-driven requests over
 * every route of openapi.json (FUZZ_REQUESTS, FUZZ_SEED override), against PostgreSQL
 * (BENCH_DATABASE_URL) through the same app the tests build. Prints the answers by status, any
 * answer at or above 500 or outside the envelope, the health of the server and the ledger check.
 */
export async function fuzzSuite(): Promise<void> {
  process.env.TEST_DATABASE_URL ??= process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const { startTestApp } = await import('../test/support/harness.js');
  const { fuzz, fuzzFixtures, fuzzTarget } = await import('../test/support/fuzz.js');
  const count = Number(process.env.FUZZ_REQUESTS ?? 200_000);
  const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
  const t = await startTestApp({
    config: { RATE_LIMIT_TEST_PER_MINUTE: '100000000', RATE_LIMIT_LIVE_PER_MINUTE: '100000000' },
  });
  try {
    const fixtures = await fuzzFixtures(t);
    const report = await fuzz(fuzzTarget(t), fixtures, { count, seed, concurrency: 16 });
    const statuses = [...report.byStatus.entries()].sort(([a], [b]) => a - b);
    console.log(
      `fuzz: ${report.sent} requests in ${(report.elapsedMs / 1000).toFixed(1)} s ` +
        `(${Math.round(report.sent / (report.elapsedMs / 1000))} req/s), seed ${seed}`,
    );
    console.log(`fuzz: by status ${statuses.map(([s, n]) => `${s}x${n}`).join(' ')}`);
    const fiveHundreds = statuses.filter(([s]) => s >= 500 || s === 0).reduce((sum, [, n]) => sum + n, 0);
    console.log(`fuzz: answers >= 500: ${fiveHundreds} (target 0) ${fiveHundreds === 0 ? 'met' : 'NOT met'}`);
    for (const failure of report.failures) console.log(`fuzz: failure ${JSON.stringify(failure)}`);
    const health = await t.request('GET', '/health');
    const check = await t.admin('GET', '/ledger/check');
    console.log(`fuzz: /health ${health.status}; ledger check ${check.body?.data?.ok === true ? 'ok' : check.text}`);
  } finally {
    await t.close();
  }
}
