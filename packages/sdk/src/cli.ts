import { Commerce } from './index.js';
import type { Event } from './resources.js';
import { signPayload } from './webhooks.js';

/**
 * `commerce listen`: follows the Events API and forwards each event to a local URL exactly as a
 * webhook delivery (same body, same headers), signed with a listen secret printed at start. For a
 * laptop without a public URL. Test keys only.
 */
export interface ListenOptions {
  apiKey: string;
  forwardTo: string;
  baseUrl?: string;
  /** Event names or `prefix.*` patterns; all events when empty. */
  events?: string[];
  /** How long one request waits on the server for the next event when caught up (long polling). Default 25 s. */
  waitSeconds?: number;
  /** The signing secret; a random one when absent. */
  secret?: string;
  print?: (line: string) => void;
  signal?: AbortSignal;
}

function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

function matches(patterns: readonly string[], name: string): boolean {
  if (patterns.length === 0) return true;
  return patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name));
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** Forwards one event as a delivery; answers the local status and time. */
async function forward(event: Event, options: ListenOptions, secret: string): Promise<string> {
  // The API's body text is the JSON of the stored payload with no whitespace: the same bytes.
  const body = JSON.stringify(event.payload);
  const timestamp = Math.floor(Date.now() / 1000);
  const started = performance.now();
  try {
    const response = await fetch(options.forwardTo, {
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
  if (!options.apiKey.startsWith('sk_test_')) {
    throw new Error('commerce listen works with a secret test key (sk_test_...) only.');
  }
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const commerce = new Commerce(options.apiKey, { ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) });
  const secret = options.secret ?? randomSecret();
  const patterns = options.events ?? [];
  // Events from now on: the newest existing one is the starting cursor.
  let after: string | undefined = (await commerce.events.list({ limit: 1 })).items[0]?.id;
  print(`Ready. Forwarding ${patterns.length ? patterns.join(', ') : 'every event'} to ${options.forwardTo}`);
  print(`Listen secret (verify with it): ${secret}`);
  const wait = options.waitSeconds ?? 25;
  while (!options.signal?.aborted) {
    // Caught up, the request waits on the server until the next event (long polling): no busy loop.
    let page;
    try {
      page = after
        ? await commerce.events.list(
            { after, limit: 100, wait },
            { timeoutMs: (wait + 10) * 1000, ...(options.signal ? { signal: options.signal } : {}) },
          )
        : await commerce.events.list({ limit: 100 }).then((newest) => ({ ...newest, items: newest.items.reverse() }));
    } catch (error) {
      if (options.signal?.aborted) break; // stopped (Ctrl-C) while a request was waiting
      throw error;
    }
    for (const event of page.items) {
      after = event.id;
      if (!matches(patterns, event.type)) continue;
      const outcome = await forward(event, options, secret);
      print(`${new Date().toISOString()}  ${event.type.padEnd(20)} ${event.id}  -> ${outcome}`);
    }
    // Without a cursor yet (no event at all), ask again after a moment.
    if (!after) await pause(1000, options.signal);
  }
}

const USAGE = `Usage: commerce listen --api-key sk_test_... --forward-to http://localhost:3000/hooks [--events payment.*,order.new] [--base-url http://localhost:8080]`;

function flag(args: string[], name: string): string | undefined {
  const index = args.indexOf(`--${name}`);
  if (index >= 0) return args[index + 1];
  const inline = args.find((arg) => arg.startsWith(`--${name}=`));
  return inline?.slice(name.length + 3);
}

export async function main(args: string[]): Promise<number> {
  if (args[0] !== 'listen') {
    process.stderr.write(`${USAGE}\n`);
    return args[0] === undefined || args[0] === '--help' ? 0 : 2;
  }
  const apiKey = flag(args, 'api-key') ?? process.env.COMMERCE_API_KEY;
  const forwardTo = flag(args, 'forward-to');
  if (!apiKey || !forwardTo) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.once('SIGTERM', () => controller.abort());
  const events = flag(args, 'events');
  const baseUrl = flag(args, 'base-url') ?? process.env.COMMERCE_BASE_URL;
  try {
    await listen({
      apiKey,
      forwardTo,
      signal: controller.signal,
      ...(baseUrl ? { baseUrl } : {}),
      ...(events ? { events: events.split(',').map((name) => name.trim()) } : {}),
    });
    return 0;
  } catch (error) {
    process.stderr.write(`commerce listen: ${(error as Error).message}\n`);
    return 1;
  }
}
