/**
 * `npm run bench [suite...]`: runs benchmark suites against PostgreSQL (BENCH_DATABASE_URL,
 * default postgres://postgres@127.0.0.1:5432/postgres) in a scratch database, and prints every
 * figure beside a baseline measured in the same run. Benchmarks are not tests: nothing here fails
 * on a slow figure; targets are printed as met or not met. Each suite's raw figures are also
 * written to bench/results/<date>-<suite>.json (support/results.ts).
 */
import { abSuite } from './ab.js';
import { balanceSuite } from './balance.js';
import { bouncerSuite } from './bouncer.js';
import { catalogSuite } from './catalog.js';
import { clusterSuite } from './cluster.js';
import { dashboardSuite } from './dashboard.js';
import { downloadsSuite } from './downloads.js';
import { embeddedSuite } from './embedded.js';
import { failoverSuite } from './failover.js';
import { fuzzSuite } from './fuzz.js';
import { growthSuite } from './growth.js';
import { intentsSuite } from './intents.js';
import { linksSuite } from './links.js';
import { listsSuite } from './lists.js';
import { paySuite } from './pay.js';
import { requestsSuite } from './requests.js';
import { restoreSuite } from './restore.js';
import { payoutsSuite } from './payouts.js';
import { startRecording, writeResults } from './support/results.js';
import { soakSuite } from './soak.js';
import { startSuite } from './start.js';
import { webhooksSuite } from './webhooks.js';

const suites: Record<string, (args: string[]) => Promise<void>> = {
  intents: intentsSuite,
  lists: listsSuite,
  pay: paySuite,
  embedded: embeddedSuite,
  webhooks: webhooksSuite,
  catalog: catalogSuite,
  dashboard: dashboardSuite,
  fuzz: fuzzSuite,
  cluster: clusterSuite,
  soak: soakSuite,
  balance: balanceSuite,
  ab: abSuite,
  payouts: payoutsSuite,
  failover: failoverSuite,
  restore: restoreSuite,
  bouncer: bouncerSuite,
  start: startSuite,
  downloads: downloadsSuite,
  links: linksSuite,
  requests: requestsSuite,
  growth: growthSuite,
};

// Arguments that are not suite names go to the suite before them: `npm run bench -- soak 2`.
const requested: { name: string; args: string[] }[] = [];
for (const arg of process.argv.slice(2)) {
  if (arg in suites || requested.length === 0) requested.push({ name: arg, args: [] });
  else requested[requested.length - 1]!.args.push(arg);
}
// The fuzz run (200,000 requests), the soak (30 minutes), the balance suite (1,750,000 rows to
// write first, 2 to 4 minutes in all), the A/B comparison (it needs a base) and the payouts suite
// (payouts beside payments, a worker draining its queue, a statement of 100,000 rows: about 3
// minutes) and the failover, restore and bouncer suites (the HA layout of scripts/ha, minutes each) and the
// stalled downloads (600,000 rows to write, then the 30 s the server waits) and the payment links
// (on PGlite, then PostgreSQL: about 3 minutes each) and the payment requests (likewise) only when
// asked for, and the growth suite (two databases of history to fill, then measured: about 27 minutes at its defaults).
const askedOnly = new Set([
  'fuzz',
  'soak',
  'balance',
  'ab',
  'payouts',
  'failover',
  'restore',
  'bouncer',
  'downloads',
  'links',
  'requests',
  'growth',
]);
const runs =
  requested.length > 0
    ? requested
    : Object.keys(suites)
        .filter((name) => !askedOnly.has(name))
        .map((name) => ({ name, args: [] }));
for (const { name, args } of runs) {
  const suite = suites[name];
  if (!suite) {
    console.error(`unknown suite "${name}"; suites: ${Object.keys(suites).join(', ')}`);
    process.exit(2);
  }
  const startedAt = new Date();
  startRecording();
  console.log(`# suite ${name}`);
  await suite(args);
  writeResults(name, args, startedAt);
}
process.exit(process.exitCode ?? 0);
