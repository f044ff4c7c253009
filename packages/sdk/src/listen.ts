import { AuthenticationError, ConfigurationError, PermissionError } from './errors.js';
import { Commerce } from './index.js';
import type { Event } from './types.js';
import { signPayload } from './webhooks.js';

/**
 * `commerce listen`: follows the Events API and forwards each event to a local URL exactly as a
 * webhook delivery (same body, same headers), signed with the listen secret. For a laptop without
 * a public URL. Test keys only.
 */
export interface ListenOptions {
  apiKey: string;
  forwardTo: string;
  baseUrl?: string;
  /** Event names or `prefix.*` patterns; all events when empty. */
  events?: string[];
  /** How long one request waits on the server for the next event when caught up (long polling). Default 25 s. */
  waitSeconds?: number;
  /** The signing secret (the CLI passes the stored one, see listen-secret.ts); a random one when absent. */
  secret?: string;
  print?: (line: string) => void;
  /** Where the reconnection notices go; stderr by default, so stdout stays one line per event. */
  warn?: (line: string) => void;
  /** The first wait after a lost connection (1 s) and the longest (30 s); doubled at each failure, jittered. */
  backoff?: { initialMs: number; maxMs: number };
  signal?: AbortSignal;
}

/** 32 random bytes in hex: the format of a `commerce`-scheme endpoint secret, so receivers take either. */
export function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Listen forwards sandbox events only: a live key must never be able to reach a laptop. */
export function assertTestKey(apiKey: string): void {
  if (!apiKey.startsWith('sk_test_')) {
    throw new ConfigurationError({
      code: 'TEST_KEY_REQUIRED',
      message: 'commerce listen works with a secret test key (sk_test_...) only.',
    });
  }
}

function matches(patterns: readonly string[], name: string): boolean {
  if (patterns.length === 0) return true;
  return patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name));
}

/** A wait that Ctrl-C ends early; its abort listener goes with it (a long outage makes many waits). */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => (clearTimeout(timer), resolve());
    const timer = setTimeout(() => (signal?.removeEventListener('abort', stop), resolve()), ms);
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/**
 * The wait before the next attempt: doubled at each failure up to the cap, and between half and
 * all of it at random, so the listeners of a whole team do not reconnect in step after a restart.
 */
export function reconnectDelay(failures: number, backoff: { initialMs: number; maxMs: number }): number {
  const ceiling = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** A key the API refuses (401) or a key without the events scope (403) stays refused: retrying would loop. */
function isFinal(error: unknown): boolean {
  return (
    error instanceof AuthenticationError || error instanceof PermissionError || error instanceof ConfigurationError
  );
}

/** Forwards one event as a delivery; answers the local status and time. */
async function forward(event: Event, forwardTo: string, secret: string): Promise<string> {
  // The API's body text is the JSON of the stored payload with no whitespace: the same bytes.
  const body = JSON.stringify(event.payload);
  const timestamp = Math.floor(Date.now() / 1000);
  const started = performance.now();
  try {
    const response = await fetch(forwardTo, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'Commerce-Webhooks/1 (commerce listen)',
        'X-Commerce-Signature': await signPayload(secret, timestamp, body),
        'X-Commerce-Timestamp': String(timestamp),
        'X-Commerce-Event': event.type,
        'X-Commerce-Delivery': `listen_${event.id}`,
      },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    await response.arrayBuffer();
    return `${response.status} (${Math.round(performance.now() - started)} ms)`;
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}

export async function listen(options: ListenOptions): Promise<void> {
  assertTestKey(options.apiKey);
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  const backoff = options.backoff ?? { initialMs: 1000, maxMs: 30_000 };
  // No retries inside a call: this loop retries for as long as it takes, and says so.
  const commerce = new Commerce(options.apiKey, {
    maxRetries: 0,
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
  });
  const secret = options.secret ?? randomSecret();
  const patterns = options.events ?? [];
  const wait = options.waitSeconds ?? 25;
  const signal = options.signal ? { signal: options.signal } : {};
  let after: string | undefined;
  let ready = false;
  let failures = 0;
  while (!options.signal?.aborted) {
    let page;
    try {
      if (!ready) {
        // Events from now on: the newest existing one is the starting cursor.
        after = (await commerce.events.list({ limit: 1 }, signal)).items[0]?.id;
        ready = true;
        print(`Ready. Forwarding ${patterns.length ? patterns.join(', ') : 'every event'} to ${options.forwardTo}`);
        if (options.secret === undefined) print(`Listen secret for this run only (verify with it): ${secret}`);
      }
      // Caught up, the request waits on the server until the next event (long polling): no busy loop.
      // After a lost connection it resumes after the last event seen: nothing in between is lost.
      page = after
        ? await commerce.events.list({ after, limit: 100, wait }, { timeoutMs: (wait + 10) * 1000, ...signal })
        : await commerce.events
            .list({ limit: 100 }, signal)
            .then((newest) => ({ ...newest, items: newest.items.reverse() }));
    } catch (error) {
      if (options.signal?.aborted) break; // stopped (Ctrl-C) while a request was waiting
      if (isFinal(error)) throw error;
      failures += 1;
      const delay = reconnectDelay(failures, backoff);
      const what = ready ? 'connection lost' : 'cannot reach the API';
      warn(`${what}, reconnecting in ${Math.max(1, Math.round(delay / 1000))}s (${(error as Error).message})`);
      await pause(delay, options.signal);
      continue;
    }
    if (failures > 0) warn(after ? `reconnected, resuming after ${after}` : 'reconnected');
    failures = 0;
    for (const event of page.items) {
      after = event.id;
      if (!matches(patterns, event.type)) continue;
      const outcome = await forward(event, options.forwardTo, secret);
      print(`${new Date().toISOString()}  ${event.type.padEnd(20)} ${event.id}  -> ${outcome}`);
    }
    // Without a cursor yet (no event at all), ask again after a moment.
    if (!after) await pause(1000, options.signal);
  }
}
