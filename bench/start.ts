/**
 * `npm run bench -- start [runs]`: how long `npm start` takes to its `ready on` line on an empty
 * data directory (first start: the database image unpacked, the demo business made) and again on
 * the same directory (restart), beside the same-run floor of any Node HTTP server (bare Fastify
 * answering /ready). Runs alternate (app first start, app restart, bare) so that a machine that
 * drifts moves all three alike. Targets (issue 37): first start ≤ 10 s, restart ≤ 3 s.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuTimeMs, freePort, peakMemoryMb } from './support/processes.js';
import { median } from './support/rounds.js';

interface Start {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
}

const BARE_SERVER = `import Fastify from 'fastify';
const app = Fastify();
app.get('/ready', async () => 'ok');
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });`;

/** The Node flags `npm start` gives the server (package.json). */
function startFlags(): string[] {
  const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
  return scripts.start!.split(/\s+/).filter((arg) => arg.startsWith('--'));
}

/** Spawns a server and measures it from the spawn to its first answer on /ready; then stops it. */
async function timeStart(args: string[], env: Record<string, string>): Promise<Start> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`the server did not start in 120 s: ${stderr}`);
    const ready = await fetch(`http://127.0.0.1:${port}/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const start = { wallMs: performance.now() - started, cpuMs: cpuTimeMs(child.pid!), rssMb: peakMemoryMb(child.pid!) };
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  return start;
}

export async function startSuite(args: string[]): Promise<void> {
  const runs = Number(args[0] ?? 5);
  const app = [...startFlags(), 'dist/server.js'];
  const appEnv = { LOG_LEVEL: 'warn' };
  const results: Record<'first' | 'restart' | 'bare', Start[]> = { first: [], restart: [], bare: [] };
  console.log(
    `npm start's server (dist/server.js, PGlite) from spawn to /ready answering; ${runs} runs, alternating ` +
      `first start / restart / bare Fastify; load average ${os.loadavg()[0]!.toFixed(1)} at the start`,
  );
  for (let run = 0; run < runs; run++) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'devapi-start-'));
    try {
      results.first.push(await timeStart(app, { ...appEnv, DATA_DIR: dir }));
      results.restart.push(await timeStart(app, { ...appEnv, DATA_DIR: dir }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    results.bare.push(await timeStart(['--input-type=module', '-e', BARE_SERVER], {}));
  }
  const targets = { first: 10_000, restart: 3_000, bare: undefined } as const;
  console.log('| start | wall, median (runs) | CPU, median | peak RSS | target |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const kind of ['first', 'restart', 'bare'] as const) {
    const starts = results[kind];
    const wall = median(starts.map((s) => s.wallMs));
    const target = targets[kind];
    const verdict = target === undefined ? 'the floor' : `≤ ${target / 1000} s: ${wall <= target ? 'met' : 'NOT met'}`;
    console.log(
      `| ${kind} | ${(wall / 1000).toFixed(2)} s (${starts.map((s) => (s.wallMs / 1000).toFixed(1)).join(', ')}) | ` +
        `${(median(starts.map((s) => s.cpuMs)) / 1000).toFixed(2)} s | ${median(starts.map((s) => s.rssMb)).toFixed(0)} MB | ${verdict} |`,
    );
  }
  console.log(`load average ${os.loadavg()[0]!.toFixed(1)} at the end`);
}
