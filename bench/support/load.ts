import http from 'node:http';

export interface LoadRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  /** Answers counted after the warm-up. */
  requests: number;
  /** Every request sent, the warm-up's included: what a server's CPU time over the run is for. */
  sent: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  firstError?: string;
  /** Seconds measured (after the warm-up), and the latencies of the answers counted, sorted. */
  seconds: number;
  latenciesMs: number[];
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One request through `agent` (kept-alive connections) to the server at `base`: its status and body. */
export function sendRequest(
  agent: http.Agent,
  base: URL,
  request: LoadRequest,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.path,
        headers: {
          ...request.headers,
          ...(request.body !== undefined
            ? {
                // A form (the wallet app's) says its own type; everything else sends JSON.
                'content-type': request.headers?.['content-type'] ?? 'application/json',
                'content-length': Buffer.byteLength(request.body),
              }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (request.body !== undefined) req.write(request.body);
    req.end();
  });
}

/**
 * A closed-loop load: `concurrency` clients each send a request, wait for its answer, and send
 * the next, for `durationMs` after a warm-up. The same generator drives the app and its
 * baseline, so their figures compare. With several base URLs, client `i` sends to URL `i mod n`.
 */
export async function runLoad(
  baseUrl: string | string[],
  options: { concurrency: number; durationMs: number; warmupMs: number; expectStatus: number },
  next: (client: number, sequence: number) => LoadRequest,
): Promise<LoadResult> {
  // Several servers: each client keeps to one, spread evenly over them.
  const bases = (Array.isArray(baseUrl) ? baseUrl : [baseUrl]).map((url) => new URL(url));
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let sequence = 0;
  let measuring = false;
  const warmupEnds = Date.now() + options.warmupMs;
  const ends = warmupEnds + options.durationMs;
  let measuredFrom = 0;

  async function client(id: number): Promise<void> {
    while (Date.now() < ends) {
      const started = process.hrtime.bigint();
      const response = await sendRequest(agent, bases[id % bases.length]!, next(id, sequence++));
      const tookMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (!measuring && Date.now() >= warmupEnds) {
        measuring = true;
        measuredFrom = Date.now();
      }
      if (!measuring) continue;
      if (response.status !== options.expectStatus) {
        errors += 1;
        firstError ??= `${response.status} ${response.body.slice(0, 300)}`;
      } else latencies.push(tookMs);
    }
  }

  await Promise.all(Array.from({ length: options.concurrency }, (_, id) => client(id)));
  const elapsed = (Date.now() - measuredFrom) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    sent: sequence,
    errors,
    perSecond: latencies.length / elapsed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ...(firstError ? { firstError } : {}),
    seconds: elapsed,
    latenciesMs: latencies,
  };
}

/** Several runs of one load as one: their answers over their measured time, latencies pooled. */
export function mergeLoads(results: LoadResult[]): LoadResult {
  const latencies = results.flatMap((result) => result.latenciesMs).sort((a, b) => a - b);
  const seconds = results.reduce((sum, result) => sum + result.seconds, 0);
  const firstError = results.find((result) => result.firstError !== undefined)?.firstError;
  return {
    requests: latencies.length,
    sent: results.reduce((sum, result) => sum + result.sent, 0),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ...(firstError ? { firstError } : {}),
    seconds,
    latenciesMs: latencies,
  };
}

export function timeSamples(samplesMs: number[]): { p50Ms: number; p99Ms: number } {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
}
