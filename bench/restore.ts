/**
 * `npm run bench -- restore` (issue 39): the restore drill. On the HA layout of scripts/ha (WAL
 * archived by pgBackRest from whichever member is primary): a full backup, 16 clients writing
 * (bench/failover.ts) with a failover in the middle, a restore point once every write so far is
 * answered, more writes after it, then a point-in-time restore into a new data directory
 * (`layout.sh restore`, replaying the WAL across the failover's new timeline), and the API started
 * on the restored database: every write acknowledged before the point is there, none after it,
 * nothing twice, and `admin ledger check` passes. Exits non-zero when a check fails.
 */
import { clusterEnv } from './cluster.js';
import { CLIENTS, queryOnce, runClients, setUpTarget, verify, type Acknowledged, type Target } from './failover.js';
import { HA_DIR, haUrl, layout, roles, waitHealthy } from '../test/hardening/ha-layout.js';
import { startServer, type ServerProcess } from './support/processes.js';
import { startReceiver } from './support/receiver.js';

const RESTORED_PORT = Number(process.env.HA_RESTORED_PORT ?? 5450);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** The clients writing for `ms` (a round under way is finished: its writes retried until answered), `during` beside them. */
async function writeFor(target: Target, ms: number, during?: () => Promise<void>): Promise<void> {
  const ends = Date.now() + ms;
  const clients = runClients(
    target,
    () => Date.now() >= ends,
    () => {},
  );
  await Promise.all([clients, during?.()]);
}

async function waitUntilPrimaryIsNot(member: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await roles()).primary === undefined || (await roles()).primary === member) {
    if (Date.now() > deadline) throw new Error(`no new primary 120 s after ${member} was lost`);
    await sleep(250);
  }
}

const copyOf = (acknowledged: Acknowledged[]): Acknowledged[] =>
  acknowledged.map(
    (acked) =>
      Object.fromEntries(Object.entries(acked).map(([kind, set]) => [kind, new Set(set)])) as unknown as Acknowledged,
  );

export async function restoreSuite(): Promise<void> {
  const failures: string[] = [];
  const receiver = await startReceiver();
  let ha: Target | undefined;
  let restoredApi: ServerProcess | undefined;
  console.log(
    `restore: the HA layout with WAL archived by pgBackRest; a full backup, ${CLIENTS} clients writing through a failover, ` +
      `a restore point, more writes, then a point-in-time restore into a new data directory`,
  );
  try {
    await layout('down');
    await layout('up');
    ha = await setUpTarget('ha', haUrl(), receiver.url);
    let began = Date.now();
    await layout('backup', 'full');
    console.log(`full backup: ${seconds(began)}`);

    // Before the restore point: writes, the primary lost in the middle of them.
    await writeFor(ha, 12_000, async () => {
      await sleep(5000);
      const primary = await waitHealthy();
      // The primary's machine lost, then back (bench/failover.ts).
      await layout('stop', primary);
      await waitUntilPrimaryIsNot(primary);
      await layout('start', primary);
    });
    await waitHealthy();
    const before = copyOf(ha.acknowledged);
    const count = (acknowledged: Acknowledged[]) =>
      acknowledged.reduce((sum, acked) => sum + Object.values(acked).reduce((n, set) => n + set.size, 0), 0);
    // Every write so far is answered: the restore point is the primary's clock now.
    const [{ now: point }] = (await queryOnce<{ now: string }>(ha.url, `SELECT now()::text AS now`)) as [
      { now: string },
    ];
    await sleep(1000);
    // After it: writes the restore must not bring back.
    await writeFor(ha, 5000);
    console.log(
      `restore point ${point}: ${count(before)} writes acknowledged before it, ${count(ha.acknowledged) - count(before)} after`,
    );
    // The WAL up to here archived (the restore replays past the point to its first later commit).
    // Switching the WAL file is an operator's act: the superuser's, not the application's role.
    const [{ segment }] = (await queryOnce<{ segment: string }>(
      haUrl('postgres'),
      `SELECT pg_walfile_name(pg_switch_wal()) AS segment`,
    )) as [{ segment: string }];
    const deadline = Date.now() + 120_000;
    for (;;) {
      const [archiver] = await queryOnce<{ last: string | null }>(
        ha.url,
        `SELECT last_archived_wal AS last FROM pg_stat_archiver`,
      );
      // Segment names of one timeline sort in WAL order; a later timeline sorts after.
      if (archiver?.last && archiver.last >= segment) break;
      if (Date.now() > deadline) throw new Error(`segment ${segment} not archived after 120 s`);
      await sleep(250);
    }

    began = Date.now();
    await layout('restore', point, `${HA_DIR}/restored`, String(RESTORED_PORT));
    console.log(`point-in-time restore into ${HA_DIR}/restored: ${seconds(began)} (restore and WAL replay)`);
    const url = new URL(ha.url);
    url.port = String(RESTORED_PORT);
    const env = clusterEnv(url.toString(), { RATE_LIMIT_TEST_PER_MINUTE: '1000000000', LOG_LEVEL: 'error' });
    restoredApi = await startServer('src/server.ts', ['--api'], env, '/ready');
    console.log(
      `\nchecks on the restored database (writes acknowledged before the restore point; any later one counts as twice):`,
    );
    failures.push(
      ...(await verify(
        { ...ha, url: url.toString(), api: restoredApi, acknowledged: before, unexpected: [...ha.unexpected] },
        { deliveries: false },
      )),
    );
    console.log(failures.length === 0 ? '\nrestore: ok' : `\nrestore: FAILED (${failures.join('; ')})`);
    if (failures.length > 0) process.exitCode = 1;
  } finally {
    await restoredApi?.stop().catch(() => {});
    if (ha) {
      ha.agent.destroy();
      await ha.worker.stop().catch(() => {});
      await ha.api.stop().catch(() => {});
    }
    await receiver.close();
    if (!process.env.BENCH_HA_KEEP) await layout('down');
  }
}
