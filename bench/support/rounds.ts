import { mergeLoads, type LoadResult } from './load.js';
import type { CpuPerRequest } from './processes.js';

/** One run of a load, with the CPU each side spent on it when that was measured. */
export interface Measured {
  result: LoadResult;
  cpu?: CpuPerRequest;
}

/** A load's rounds, and all of them as one. */
export interface InRounds {
  result: LoadResult;
  /** Per request sent, over all rounds; absent when no round measured it. */
  cpu?: CpuPerRequest;
  rounds: LoadResult[];
}

/** BENCH_ROUNDS: how many times each load of a comparison runs, in turn with the others. */
export function roundCount(): number {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_ROUNDS must be a whole number >= 1`);
  return rounds;
}

/** BENCH_ROUND_MS: how long each round measures, after its warm-up. */
export function roundDurationMs(): number {
  const ms = Number(process.env.BENCH_ROUND_MS ?? 4000);
  if (!Number.isInteger(ms) || ms < 1) throw new Error(`BENCH_ROUND_MS must be a whole number of ms >= 1`);
  return ms;
}

/**
 * Runs each load `rounds` times, in turn (a, b, c, a, b, c...). On a machine whose speed drifts
 * by up to 2x from one minute to the next, one long run of each side compares the app on one
 * machine with its baseline on another; rounds side by side compare like with like, and the
 * ratio of each round says how much the comparison itself moves.
 */
export async function inRounds<K extends string>(
  rounds: number,
  loads: Record<K, () => Promise<Measured>>,
): Promise<Record<K, InRounds>> {
  const names = Object.keys(loads) as K[];
  const runs = new Map<K, Measured[]>(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of names) runs.get(name)!.push(await loads[name]());
  }
  const combined = {} as Record<K, InRounds>;
  for (const name of names) {
    const measured = runs.get(name)!;
    const results = measured.map((run) => run.result);
    const cpu = measured.every((run) => run.cpu !== undefined) ? weighted(measured) : undefined;
    combined[name] = { result: mergeLoads(results), rounds: results, ...(cpu ? { cpu } : {}) };
  }
  return combined;
}

/** CPU per request over several runs: each run weighs by the requests it sent. */
function weighted(runs: Measured[]): CpuPerRequest {
  const sent = runs.reduce((sum, run) => sum + run.result.sent, 0) || 1;
  const total = (side: keyof CpuPerRequest) =>
    runs.reduce((sum, run) => sum + run.cpu![side] * run.result.sent, 0) / sent;
  return { server: total('server'), postgres: total('postgres'), load: total('load') };
}

/** The throughput ratio of each round, ours over the baseline run beside it. */
export function roundRatios(ours: InRounds, baseline: InRounds): number[] {
  return ours.rounds.map((run, i) => run.perSecond / baseline.rounds[i]!.perSecond);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
