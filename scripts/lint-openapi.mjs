/**
 * `npm run lint:openapi`: lints openapi.json with Redocly's engine (@redocly/openapi-core, the
 * library `@redocly/cli lint` runs) and its `recommended` rules. Exits 1 on any error.
 */
import { createConfig, lint } from '@redocly/openapi-core';

const file = process.argv[2] ?? 'openapi.json';
const config = await createConfig({ extends: ['recommended'] });
const problems = await lint({ ref: file, config });
const errors = problems.filter((problem) => problem.severity === 'error');
const warnings = problems.filter((problem) => problem.severity === 'warn');
for (const problem of problems) {
  const where = problem.location[0]?.pointer ?? '';
  process.stdout.write(`${problem.severity} ${problem.ruleId} ${where}: ${problem.message}\n`);
}
process.stdout.write(`${file}: ${errors.length} error(s), ${warnings.length} warning(s)\n`);
process.exit(errors.length > 0 ? 1 : 0);
