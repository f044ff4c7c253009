import type { Reporter, TestModule } from 'vitest/node';
import { runsSlowTier, SLOW_TIER } from './tiers.js';

const SLOWEST_SHOWN = 8;

/**
 * Added to vitest's own report: the tests this run skipped, by file (on PGlite the race tests,
 * which need transactions side by side, run only on PostgreSQL: `.ci/run` runs both), whether
 * the slow tier ran (test/support/tiers.ts), and the slowest files, so a slow one is seen at once.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    const skipped = testModules.flatMap((module) =>
      [...module.children.allTests('skipped')].map((test) => `  ${module.relativeModuleId}: ${test.fullName}`),
    );
    if (skipped.length > 0) lines.push(`Skipped in this run (${skipped.length}):`, ...skipped);
    if (!runsSlowTier()) {
      lines.push(`Slow tier not run (\`npm run test:all\` runs it): ${SLOW_TIER.join(', ')}`);
    }
    const slowest = [...testModules]
      .map((module) => ({ file: module.relativeModuleId, seconds: module.diagnostic().duration / 1000 }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, SLOWEST_SHOWN);
    lines.push(
      'Slowest files:',
      ...slowest.map(({ file, seconds }) => `  ${seconds.toFixed(1).padStart(6)} s  ${file}`),
    );
    process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}
