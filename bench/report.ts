import type { LoadResult } from './support/load.js';
import type { CpuPerRequest } from './support/processes.js';
import { recordTable } from './support/results.js';
import { median } from './support/rounds.js';

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

function row(cells: string[], widths: number[]): string {
  return cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
}

/** What a throughput line prints of a load (a drain timed by hand has no latencies to give). */
export type Throughput = Omit<LoadResult, 'seconds' | 'latenciesMs'>;

/** The figures of a load kept in the run's results file (never its list of latencies). */
const figures = ({ requests, sent, errors, perSecond, p50Ms, p99Ms }: Throughput) => ({
  requests,
  sent,
  errors,
  perSecond,
  p50Ms,
  p99Ms,
});

/**
 * Throughput figures beside their same-run baseline, with the ratio and the target. A line run in
 * rounds (rounds.ts) gives each round's ratio: its ratio is their median, and they are listed.
 */
export function printThroughput(
  title: string,
  lines: { name: string; ours: Throughput; baseline: Throughput; ratios?: number[]; target?: number }[],
): void {
  const widths = [26, 10, 9, 9, 12, 9, 9, 7, 14];
  console.log(`\n${title}`);
  console.log(row(['', 'req/s', 'p50 ms', 'p99 ms', 'base req/s', 'p50 ms', 'p99 ms', 'ratio', 'target'], widths));
  const kept: unknown[] = [];
  recordTable({ kind: 'throughput', title, lines: kept });
  for (const line of lines) {
    const ratio = line.ratios ? median(line.ratios) : line.ours.perSecond / line.baseline.perSecond;
    const target = line.target === undefined ? '' : `>= ${line.target}x ${ratio >= line.target ? 'met' : 'NOT MET'}`;
    kept.push({
      name: line.name,
      ours: figures(line.ours),
      baseline: figures(line.baseline),
      ratio,
      ratios: line.ratios,
      target: line.target,
      met: line.target === undefined ? undefined : ratio >= line.target,
    });
    console.log(
      row(
        [
          line.name,
          fixed(line.ours.perSecond, 0),
          fixed(line.ours.p50Ms, 2),
          fixed(line.ours.p99Ms, 2),
          fixed(line.baseline.perSecond, 0),
          fixed(line.baseline.p50Ms, 2),
          fixed(line.baseline.p99Ms, 2),
          `${fixed(ratio, 2)}x`,
          target,
        ],
        widths,
      ),
    );
    if (line.ratios && line.ratios.length > 1) {
      console.log(`  ratio of each round: ${line.ratios.map((r) => `${fixed(r, 2)}x`).join(', ')} (median above)`);
    }
    for (const [label, result] of [
      ['ours', line.ours],
      ['baseline', line.baseline],
    ] as const) {
      if (result.errors > 0)
        console.log(`  ! ${label}: ${result.errors} unexpected answers, first: ${result.firstError}`);
    }
  }
}

/** Latencies of one operation under several conditions, beside a baseline operation. */
export function printLatencies(
  title: string,
  baselineName: string,
  lines: { name: string; p50Ms: number; p99Ms: number; baselineP50Ms: number; baselineP99Ms: number }[],
): void {
  const widths = [34, 9, 9, 14, 9, 9];
  recordTable({ kind: 'latencies', title, lines: lines.map((line) => ({ ...line, baselineName })) });
  console.log(`\n${title}`);
  console.log(row(['', 'p50 ms', 'p99 ms', `${baselineName} p50`, 'p99 ms', 'p50 x'], widths));
  for (const line of lines) {
    console.log(
      row(
        [
          line.name,
          fixed(line.p50Ms, 3),
          fixed(line.p99Ms, 3),
          fixed(line.baselineP50Ms, 3),
          fixed(line.baselineP99Ms, 3),
          `${fixed(line.p50Ms / line.baselineP50Ms, 2)}x`,
        ],
        widths,
      ),
    );
  }
}

/** The CPU each side spent per request (warm-up included), one line per measured load. */
export function printCpuPerRequest(title: string, lines: { name: string; cpu: CpuPerRequest }[]): void {
  const columns = (cells: string[]) => cells.map((cell) => cell.padStart(11)).join('');
  recordTable({ kind: 'cpu-per-request', title, lines: lines.map(({ name, cpu }) => ({ name, ...cpu })) });
  console.log(`\n${title} (warm-up included), ms`);
  console.log(`  ${''.padEnd(24)}${columns(['server', 'PostgreSQL', 'load', 'total'])}`);
  for (const { name, cpu } of lines) {
    const { server, postgres, load } = cpu;
    console.log(
      `  ${name.padEnd(24)}${columns([server, postgres, load, server + postgres + load].map((ms) => ms.toFixed(2)))}`,
    );
  }
}
