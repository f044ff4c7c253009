/**
 * Each suite's raw figures, kept as a file per run: bench/results/<date>-<suite>.json (the date in
 * UTC, with the time when that file exists already). It holds the tables report.ts printed, as
 * numbers, and every line the suite printed, with what the run was: arguments, BENCH_* settings,
 * the commit, the machine. bench/results/README.md says which of these files are committed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One table as report.ts printed it: its kind, its title and its lines' figures. */
export interface ResultTable {
  kind: 'throughput' | 'latencies' | 'cpu-per-request';
  title: string;
  lines: unknown[];
}

const resultsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'results');

let tables: ResultTable[] = [];
let output: string[] = [];

/** Called by report.ts for each table it prints. */
export function recordTable(table: ResultTable): void {
  tables.push(table);
}

/** Starts a suite's record: its tables and printed lines from now on (console.log is wrapped once). */
export function startRecording(): void {
  tables = [];
  output = [];
  if (wrapped) return;
  wrapped = true;
  const log = console.log.bind(console);
  console.log = (...args: unknown[]) => {
    output.push(args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' '));
    log(...args);
  };
}
let wrapped = false;

function commit(): string | undefined {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim();
    return dirty === '' ? head : `${head}+changes`;
  } catch {
    return undefined;
  }
}

/** Writes the suite's record and says where; returns the file's path. */
export function writeResults(suite: string, args: string[], startedAt: Date): string {
  const finishedAt = new Date();
  const day = startedAt.toISOString().slice(0, 10);
  mkdirSync(resultsDir, { recursive: true });
  let file = path.join(resultsDir, `${day}-${suite}.json`);
  if (existsSync(file)) {
    const time = startedAt.toISOString().slice(11, 19).replaceAll(':', '');
    file = path.join(resultsDir, `${day}-${time}-${suite}.json`);
  }
  const settings = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => /^(BENCH_|AB_|FUZZ_|SOAK_)/.test(name) && !/URL$/.test(name)),
  );
  const record = {
    suite,
    args,
    startedAt: startedAt.toISOString(),
    seconds: Math.round((finishedAt.getTime() - startedAt.getTime()) / 100) / 10,
    commit: commit(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memoryMb: Math.round(os.totalmem() / 2 ** 20),
      loadAverage: os.loadavg().map((load) => Math.round(load * 100) / 100),
      node: process.version,
    },
    settings,
    tables,
    output,
  };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`\nraw figures: ${path.relative(process.cwd(), file)}`);
  return file;
}
