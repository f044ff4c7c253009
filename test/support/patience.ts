/**
 * One factor for every wait of the suite: `TEST_TIME_FACTOR` (default 1) stretches each time limit
 * a test waits under (waitUntil, a receiver's waitFor, a started server's poll), so a slower or
 * busier machine raises one number instead of many. Limits only: a wait ends as soon as its
 * condition holds, so a larger factor costs nothing when tests pass.
 */
const factor = Number(process.env.TEST_TIME_FACTOR ?? 1);
export const TIME_FACTOR = Number.isFinite(factor) && factor > 0 ? factor : 1;

export function patience(ms: number): number {
  return Math.round(ms * TIME_FACTOR);
}
