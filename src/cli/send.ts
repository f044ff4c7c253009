/** How the admin CLI sends one request: with a timeout, and again when no answer came back. */
import { UsageError } from './command-line.js';

export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Attempts of one request whose answer never came (refused, reset, cut, or not within the timeout). */
const ATTEMPTS = 3;
const RETRY_DELAY_MS = 250;
/** How long the CLI waits for an earlier attempt of its write that the API says still runs. */
const IN_PROGRESS_WAIT_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 30_000;
/** The longest delay Node's timers hold; past it a timeout fires at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** ADMIN_TIMEOUT_MS: a server that hangs must not hang the operator's shell (or a script) with it. */
export function attemptTimeout(env: NodeJS.ProcessEnv): number {
  const setting = env.ADMIN_TIMEOUT_MS;
  if (setting === undefined || setting === '') return DEFAULT_TIMEOUT_MS;
  const ms = Number(setting);
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > MAX_TIMEOUT_MS) {
    throw new UsageError(`ADMIN_TIMEOUT_MS must be a whole number of milliseconds, 1 to ${MAX_TIMEOUT_MS}.`);
  }
  return ms;
}

/**
 * Sends the request, and again (same headers, so the same idempotency key) when no answer came
 * back, or while the API says an earlier attempt with the key still runs. `uncertain`: an earlier
 * attempt got no answer, so it may have been done even when the last answer is an error.
 */
export async function sendWithRetries(
  url: string,
  init: RequestInit,
  timeoutMs: number,
  output: CliOutput,
): Promise<{ response: Response; uncertain: boolean }> {
  const keyed = new Headers(init.headers).has('x-idempotency-key');
  // From the first "still running" answer: an attempt that timed out may well be the one running.
  let waitUntil: number | undefined;
  let unanswered = 0;
  for (;;) {
    const uncertain = unanswered > 0;
    try {
      // The signal covers reading the body too: an answer cut after its headers is no answer.
      const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      if (response.status !== 409 || !keyed) return { response, uncertain };
      const body = (await response
        .clone()
        .json()
        .catch(() => null)) as { error?: { code?: string } } | null;
      if (body?.error?.code !== 'IDEMPOTENCY_KEY_IN_PROGRESS') return { response, uncertain };
      waitUntil ??= Date.now() + IN_PROGRESS_WAIT_MS;
      if (Date.now() > waitUntil) return { response, uncertain };
      await response.body?.cancel();
      output.stderr('An earlier attempt with this idempotency key is still running; waiting for its answer.\n');
    } catch (error) {
      unanswered++;
      if (unanswered >= ATTEMPTS) throw error;
      output.stderr(
        `No answer (${noAnswer(error, timeoutMs)}); sending it again${keyed ? ' with the same idempotency key' : ''} ` +
          `(attempt ${unanswered + 1} of ${ATTEMPTS}).\n`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS * Math.max(1, unanswered)));
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** fetch's own message is "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND...) is its cause. */
export function reachFailure(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = cause && typeof cause === 'object' && 'code' in cause ? String(cause.code) : undefined;
  if (code === 'ECONNREFUSED') return 'connection refused (nothing listens there)';
  return code ? `${messageOf(error)} (${code})` : messageOf(error);
}

export function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

function noAnswer(error: unknown, timeoutMs: number): string {
  return isTimeout(error) ? `none within ${timeoutMs / 1000} s` : reachFailure(error);
}
