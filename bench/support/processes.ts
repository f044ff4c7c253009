import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface ServerProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The Node flags `npm start` gives the server (package.json), so the benchmarks run it the same way. */
function startFlags(): string[] {
  const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
  return scripts.start!.split(/\s+/).filter((arg) => arg.startsWith('--'));
}

/**
 * How to run a script: the app's own code as production runs it (compiled, `npm run bench` builds
 * first), the benchmark's own TypeScript (the baselines) through tsx. Both with `npm start`'s
 * flags, so that their memory compares like for like.
 */
function runnable(script: string): string[] {
  return script.startsWith('src/')
    ? [...startFlags(), script.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js')]
    : [...startFlags(), '--import', 'tsx', script];
}

/** BENCH_LOG_DIR: each process's log (stdout) goes to a file there, to read what went wrong. */
function logOutput(script: string): 'ignore' | number {
  const dir = process.env.BENCH_LOG_DIR;
  return dir ? openSync(`${dir}/${script.replace(/\W/g, '_')}-${Date.now()}.log`, 'a') : 'ignore';
}

/** Starts a server script in its own process (its own core) and waits until `readyPath` answers. */
export async function startServer(
  script: string,
  args: string[],
  env: Record<string, string>,
  readyPath: string,
): Promise<ServerProcess> {
  const port = await freePort();
  // BENCH_NODE_ARGS (e.g. --cpu-prof) go to every server and worker the benchmarks start.
  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...runnable(script), ...args], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', logOutput(script), 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited: ${stderr}`);
    try {
      const response = await fetch(`${url}${readyPath}`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${script} did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Starts a process that serves no HTTP (a worker) and waits until `ready` says it runs. */
export async function startProcess(
  script: string,
  args: string[],
  env: Record<string, string>,
  ready: () => Promise<boolean>,
): Promise<{ pid: number; stop(): Promise<void> }> {
  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...runnable(script), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', logOutput(script), 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!(await ready())) {
    if (child.exitCode !== null) throw new Error(`${script} exited: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`${script} did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resets a process's peak memory mark (Linux), so the next peak belongs to what runs next. */
export function resetPeakMemory(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** A process's peak resident memory since the last reset, in MB (Linux). */
export function peakMemoryMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** CPU time a process has used so far (user + system), in ms (Linux; clock ticks of 10 ms). */
export function cpuTimeMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time of every PostgreSQL process on this machine so far, in ms: its backends, the processes
 * that write the WAL for them, and the backends that have ended (counted in the postmaster's
 * children's time once it has reaped them). Only meaningful when the server is local and nothing
 * else uses it.
 */
export function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes(' (postgres) ')) continue;
      const fields = stat.split(') ')[1]!.split(' ');
      // utime, stime, cutime, cstime: clock ticks of 10 ms.
      total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** CPU per request (ms) of each side of a load: the servers, PostgreSQL and the load generator. */
export interface CpuPerRequest {
  server: number;
  postgres: number;
  load: number;
}

/**
 * Runs a load and measures the CPU each side spent per request sent: the server processes `pids`,
 * PostgreSQL and this process (the load generator). Their sum bounds what 2 cores can do whatever
 * else the machine is doing, and on a machine whose speed swings from run to run, per-request CPU
 * moves less than throughput does.
 */
export async function withCpuPerRequest<R extends { sent: number }>(
  pids: number[],
  run: () => Promise<R>,
): Promise<{ result: R; cpu: CpuPerRequest }> {
  const before = { servers: pids.map(cpuTimeMs), postgres: postgresCpuMs(), load: process.cpuUsage() };
  const result = await run();
  const per = (ms: number) => ms / (result.sent || 1);
  const load = process.cpuUsage(before.load);
  return {
    result,
    cpu: {
      server: per(pids.reduce((sum, pid, i) => sum + cpuTimeMs(pid) - before.servers[i]!, 0)),
      postgres: per(postgresCpuMs() - before.postgres),
      load: per((load.user + load.system) / 1000),
    },
  };
}

/** A process's resident memory now, in MB (Linux). */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}
