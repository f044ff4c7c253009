/** api.md 6.1, read as gaps (decisions): the wait after each failed attempt, in seconds. */
export const RETRY_GAPS_SECONDS = [30, 120, 900, 3600, 14_400, 43_200, 86_400] as const;
export const MAX_ATTEMPTS = RETRY_GAPS_SECONDS.length + 1;
/** Each retry waits its gap give or take this fraction, so failures at one moment do not all retry at one moment. */
export const RETRY_JITTER = 0.1;

/** The wait, in seconds, after failed attempt number `attemptCount` of a schedule: its gap, scaled and jittered. */
export function retryDelaySeconds(attemptCount: number, scale: number, random: () => number = Math.random): number {
  const gap = RETRY_GAPS_SECONDS[Math.min(Math.max(attemptCount, 1), RETRY_GAPS_SECONDS.length) - 1]!;
  return gap * scale * (1 + (random() * 2 - 1) * RETRY_JITTER);
}
