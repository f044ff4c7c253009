/**
 * The built server started as `npm start` starts it (plain Node, no TypeScript loader), and other
 * long-running processes a test starts beside it, with their output kept for its assertions.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { patience } from './patience.js';

const root = process.cwd();

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** `npm install` builds dist/ (prepare); rebuild here only when src/ changed since. */
export function ensureBuilt(): void {
  const built = statSync(path.join(root, 'dist', 'server.js'), { throwIfNoEntry: false });
  const image = statSync(path.join(root, 'dist', 'pglite-image', 'manifest.json'), { throwIfNoEntry: false });
  if (built && image && built.mtimeMs >= newestMtime(path.join(root, 'src'))) return;
  const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), 'server'], {
    encoding: 'utf8',
  });
  assert.equal(build.status, 0, `npm run build failed:\n${build.stdout}\n${build.stderr}`);
}

/** The command `npm start` runs, as an argv for this Node. */
export function startCommand(): string[] {
  const scripts = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const [program, ...args] = scripts.start!.split(/\s+/);
  assert.equal(program, 'node', 'npm start runs plain Node');
  assert.ok(!args.some((arg) => /tsx|ts-node|--import|--loader/.test(arg)), `no TypeScript loader: ${scripts.start}`);
  return args.map((arg) => (arg.startsWith('-') ? arg : path.join(root, arg)));
}

export interface StartedProcess {
  /** For messages: "the server", "the receiver". */
  name: string;
  child: ChildProcess;
  /** Leads a process group of its own (spawned detached): stopped as a group. */
  group: boolean;
  /** stdout and stderr so far, interleaved as they came. */
  output: () => string;
  /** Resolves with the exit code once the process exited and its output is all read. */
  closed: Promise<number | null>;
  /** Whether `closed` resolved: nothing of it holds its output open any more. */
  isClosed: () => boolean;
}

/** Keeps the output of a process spawned with piped stdout and stderr. */
export function keepOutput(name: string, child: ChildProcess, group = false): StartedProcess {
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  // 'close', not 'exit': stdout may still hold the last lines ("stopped") when the process exits.
  let isClosed = false;
  const closed = once(child, 'close').then(([code]) => {
    isClosed = true;
    return code as number | null;
  });
  return { name, child, group, output: () => output, closed, isClosed: () => isClosed };
}

/** Polls a started process; the generous limit is for a loaded machine, where the first start's initdb is slow. */
export async function poll<T>(
  what: string,
  started: StartedProcess,
  probe: () => T | undefined,
  timeoutMs = 240_000,
): Promise<T> {
  const limitMs = patience(timeoutMs);
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (started.child.exitCode !== null || started.child.signalCode !== null)
      throw new Error(`${started.name} exited before ${what}:\n${started.output()}`);
    if (Date.now() > deadline) throw new Error(`no ${what} after ${limitMs} ms:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The server as `npm start` runs it, in `cwd`, with `env` over this process's environment. */
export function start(cwd: string, env: NodeJS.ProcessEnv): StartedProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const child = spawn(process.execPath, startCommand(), { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  return keepOutput('the server', child);
}

function signal(started: StartedProcess, name: NodeJS.Signals): void {
  if (!started.group) {
    started.child.kill(name);
    return;
  }
  // The group may outlive its leader (a shell's children): signal it even when the leader is gone.
  try {
    process.kill(-started.child.pid!, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * SIGTERM (to the whole group for a group leader, so what it started stops too), SIGKILL if it is
 * still running after `graceMs`; the exit code.
 */
export async function stop(started: StartedProcess, graceMs = 30_000): Promise<number | null> {
  if (started.isClosed()) return started.closed;
  signal(started, 'SIGTERM');
  const timer = setTimeout(() => signal(started, 'SIGKILL'), graceMs);
  try {
    return await started.closed;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A port nothing listens on now, for a process that must be told its port up front. Taken below
 * Linux's ephemeral range (32768 and up): a port from `listen(0)` can meanwhile become the local
 * port of one of the many outgoing connections tests make, and the process's own listen then
 * fails with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = net.createServer();
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!listening) continue;
    server.close();
    await once(server, 'close');
    return port;
  }
}
