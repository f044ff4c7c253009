/**
 * `npm run lint:openapi`: lints openapi.json with Redocly's engine (@redocly/openapi-core, the
 * library `@redocly/cli lint` runs) and its `recommended` rules. Exits 1 on any error.
 *
 * Two departures from `recommended`, each for a reason:
 * - `info-license` is off: the project is private (package.json) and its document has no licence
 *   to state.
 * - `no-ambiguous-paths` compares path templates only: `/payouts/batches/{id}` and
 *   `/payouts/{referenceNumber}/cancel` look alike, though no URL matches both (a reference is
 *   `PO-` and 16 digits, never `batches`). A warning is kept unless the two paths' own parameter
 *   patterns keep them apart at some segment; the paths are the contract's and stay as they are.
 */
import { createConfig, lint } from '@redocly/openapi-core';
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'openapi.json';
const config = await createConfig({ extends: ['recommended'], rules: { 'info-license': 'off' } });
const document = JSON.parse(readFileSync(file, 'utf8'));

/** The pattern of a path parameter, as any operation of the path declares it. */
function parameterPattern(path, name) {
  for (const operation of Object.values(document.paths?.[path] ?? {})) {
    for (const parameter of operation?.parameters ?? []) {
      if (parameter.in === 'path' && parameter.name === name && parameter.schema?.pattern)
        return new RegExp(parameter.schema.pattern, 'u');
    }
  }
  return undefined;
}

/** Whether a literal segment of one path can never be the other path's parameter there. */
function literalExcluded(path, segment, literal) {
  const name = /^\{(.+)\}$/.exec(segment)?.[1];
  if (/^\{.+\}$/.test(literal)) return false; // two parameters: both may take any value
  const pattern = name === undefined ? undefined : parameterPattern(path, name);
  return pattern !== undefined && !pattern.test(literal);
}

/** Two templates no single URL matches: at some segment a parameter's pattern refuses the other's literal. */
function disjoint(a, b) {
  const left = a.split('/');
  const right = b.split('/');
  if (left.length !== right.length) return true;
  return left.some((segment, i) => literalExcluded(a, segment, right[i]) || literalExcluded(b, right[i], segment));
}

const problems = (await lint({ ref: file, config })).filter((problem) => {
  if (problem.ruleId !== 'no-ambiguous-paths') return true;
  const [a, b] = [...problem.message.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
  return !(a && b && disjoint(a, b));
});
const errors = problems.filter((problem) => problem.severity === 'error');
const warnings = problems.filter((problem) => problem.severity === 'warn');
for (const problem of problems) {
  const where = problem.location[0]?.pointer ?? '';
  process.stdout.write(`${problem.severity} ${problem.ruleId} ${where}: ${problem.message}\n`);
}
process.stdout.write(`${file}: ${errors.length} error(s), ${warnings.length} warning(s)\n`);
process.exit(errors.length > 0 ? 1 : 0);
