/**
 * `npm run bench [suite...]`: runs benchmark suites against PostgreSQL (BENCH_DATABASE_URL,
 * default postgres://postgres@127.0.0.1:5432/postgres) in a scratch database, and prints every
 * figure beside a baseline measured in the same run. Benchmarks are not tests: nothing here fails
 * on a slow figure; targets are printed as met or not met.
 */
import { catalogSuite } from './catalog.js';
import { dashboardSuite } from './dashboard.js';
import { embeddedSuite } from './embedded.js';
import { fuzzSuite } from './fuzz.js';
import { intentsSuite } from './intents.js';
import { listsSuite } from './lists.js';
import { paySuite } from './pay.js';
import { webhooksSuite } from './webhooks.js';

const suites: Record<string, () => Promise<void>> = {
  intents: intentsSuite,
  lists: listsSuite,
  pay: paySuite,
  embedded: embeddedSuite,
  webhooks: webhooksSuite,
  catalog: catalogSuite,
  dashboard: dashboardSuite,
  fuzz: fuzzSuite,
};

const requested = process.argv.slice(2);
// The fuzz run (200,000 requests) only when asked for: `npm run bench -- fuzz`.
const names = requested.length > 0 ? requested : Object.keys(suites).filter((name) => name !== 'fuzz');
for (const name of names) {
  const suite = suites[name];
  if (!suite) {
    console.error(`unknown suite "${name}"; suites: ${Object.keys(suites).join(', ')}`);
    process.exit(2);
  }
  console.log(`# suite ${name}`);
  await suite();
}
process.exit(0);
