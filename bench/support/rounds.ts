import { mergeLoads, type LoadResult } from './load.js';
import type { CpuPerRequest } from './processes.js';

/** One run of a load, with the CPU each side spent on it (`undefined` where that is not measured). */
export interface Measured<Cpu extends CpuPerRequest | undefined> {
  result: LoadResult;
  cpu: Cpu;
}

/** A load's rounds, and all of them as one (CPU per request sent over all rounds). */
export interface InRounds<Cpu extends CpuPerRequest | undefined> {
  result: LoadResult;
  cpu: Cpu;
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
 * Runs each load `rounds` times, in turn, the order reversed every other round (a b c, c b a,
 * a b c...). On a machine whose speed drifts by up to 2x from one minute to the next, one long
 * run of each side compares the app on one machine with its baseline on another; rounds side by
 * side compare like with like, the reversal keeps a drift (or the tables growing) within a round
 * from always landing on the same side, and the ratio of each round says how much the comparison
 * itself moves.
 */
export async function inRounds<K extends string, Cpu extends CpuPerRequest | undefined>(
  rounds: number,
  loads: Record<K, () => Promise<Measured<Cpu>>>,
): Promise<Record<K, InRounds<Cpu>>> {
  const names = Object.keys(loads) as K[];
  const runs = new Map<K, Measured<Cpu>[]>(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) runs.get(name)!.push(await loads[name]());
  }
  const combined = {} as Record<K, InRounds<Cpu>>;
  for (const name of names) {
    const measured = runs.get(name)!;
    const results = measured.map((run) => run.result);
    combined[name] = { result: mergeLoads(results), rounds: results, cpu: perRequestSent(measured) };
  }
  return combined;
}

/** CPU per request over several runs: each run weighs by the requests it sent. */
function perRequestSent<Cpu extends CpuPerRequest | undefined>(runs: Measured<Cpu>[]): Cpu {
  if (runs.some((run) => run.cpu === undefined)) return undefined as Cpu;
  const sent = runs.reduce((sum, run) => sum + run.result.sent, 0) || 1;
  const mean = (side: keyof CpuPerRequest) =>
    runs.reduce((sum, run) => sum + run.cpu![side] * run.result.sent, 0) / sent;
  return { server: mean('server'), postgres: mean('postgres'), load: mean('load') } as Cpu;
}

/** The throughput ratio of each round, ours over the baseline run beside it. */
export function roundRatios(
  ours: InRounds<CpuPerRequest | undefined>,
  baseline: InRounds<CpuPerRequest | undefined>,
): number[] {
  return ours.rounds.map((run, i) => run.perSecond / baseline.rounds[i]!.perSecond);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
