/**
 * A clock a test moves by hand, passed to startTestApp({ clock }) (the key cache and the rate
 * limits read it): crossing a rate-limit window or a cache TTL takes no waiting.
 */
export interface ManualClock {
  (): number;
  advance(ms: number): void;
}

/** Starts in the middle of the current minute, so a run of requests never straddles a window. */
export function manualClock(): ManualClock {
  let now = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
  const clock = (() => now) as ManualClock;
  clock.advance = (ms) => {
    now += ms;
  };
  return clock;
}
