/**
 * Admin CLI: a thin client of the operator API (/api/v1/admin).
 *   npm run --silent admin -- <command> [options] [--json]
 * It finds the server the way `npm start` runs it: the same PORT, HOST, DATA_DIR and ADMIN_TOKEN,
 * with the server's defaults (connection.ts); ADMIN_URL points it elsewhere.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  businessDetails,
  businessTable,
  liveKeysNote,
  type BusinessListItem,
  type BusinessPage,
  type CreatedBusinessOutput,
} from './business-output.js';
import { ConnectionError, resolveConnection } from './connection.js';

const usage = `Usage: npm run --silent admin -- <command> [options] [--json]

  business create --name NAME [--approve-live] [--no-shop]
                                    live keys only with --approve-live (else: at approve-live)
  business approve-live BUSINESS_ID   issues the live keys the business lacks, shown once
  business list [--page N] [--limit N]
                                    LIVE: approved, requested (asked from the dashboard) or no
  business show BUSINESS_ID         one business, with its request for live access
  key create --business ID --kind secret|publishable --env test|live [--scopes a,b] [--ip-allow ADDR,...]
  key suspend KEY_ID | key revoke KEY_ID | key rotate KEY_ID
  key list --business ID
  api disable [--business ID] | api enable [--business ID]
  fees set --business ID [--provider-bps N] [--payer-fee N] [--tof-bps N] [--tte-bps N]
           [--revenue-model COMMISSION|MARGIN] [--margin-bps N] [--payout-fee-flat C] [--payout-fee-bps N]
  wallet create --phone P --pin N --balance C --env test|live [--locked]
  wallet credit --phone P --amount C --env test|live
  wallet show --phone P --env test|live
  ledger check                      exits 1 when an invariant of the ledger does not hold
  user create --business ID --email E --password P [--role owner|viewer]
  user list --business ID
  user disable USER_ID              signs the user out everywhere
  user reset-password USER_ID --password P

Every write carries an idempotency key, so the CLI can send it again when its answer is lost
(up to 3 attempts) without doing it twice. --idempotency-key KEY chooses the key: the same
command run again with the same key answers the first run's result instead of doing it again.

Environment: the server's own settings, with its defaults, so nothing needs exporting after
\`npm start\` in the same checkout: PORT (8080), HOST, DATA_DIR (./data: the token is read from
DATA_DIR/admin-token) or ADMIN_TOKEN. ADMIN_URL (default http://127.0.0.1:$PORT) points at another
server; ADMIN_TIMEOUT_MS (30000: how long one attempt waits for its answer before it counts as lost).`;

class UsageError extends Error {}

function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

type Call = {
  method: string;
  path: string;
  body?: Record<string, unknown>;
  /** For checks: whether the answer means success (the exit code follows it). */
  succeeded?: (data: unknown) => boolean;
  /** For people (without --json): the answer as text, when JSON is not the best way to read it. */
  render?: (data: unknown) => string;
  /** For people (without --json): a line on stderr after a success, beside the answer. */
  note?: (data: unknown) => string | undefined;
  idempotencyKey?: string;
};

function toCall(args: string[]): Call {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'approve-live': { type: 'boolean' },
      'no-shop': { type: 'boolean' },
      business: { type: 'string' },
      kind: { type: 'string' },
      env: { type: 'string' },
      scopes: { type: 'string' },
      'ip-allow': { type: 'string' },
      'provider-bps': { type: 'string' },
      'payer-fee': { type: 'string' },
      'tof-bps': { type: 'string' },
      'tte-bps': { type: 'string' },
      'margin-bps': { type: 'string' },
      'payout-fee-flat': { type: 'string' },
      'payout-fee-bps': { type: 'string' },
      'revenue-model': { type: 'string' },
      phone: { type: 'string' },
      pin: { type: 'string' },
      balance: { type: 'string' },
      amount: { type: 'string' },
      locked: { type: 'boolean' },
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      json: { type: 'boolean' },
      'idempotency-key': { type: 'string' },
      page: { type: 'string' },
      limit: { type: 'string' },
    },
  });
  const [group, action, id] = positionals;
  const command = `${group ?? ''} ${action ?? ''}`.trim();
  const call = ((): Call => {
    switch (command) {
      case 'business create':
        return {
          method: 'POST',
          path: '/businesses',
          body: {
            name: required(values.name, '--name'),
            approveLive: values['approve-live'] ?? false,
            withShop: !values['no-shop'],
            // Live keys belong to approved businesses: an unapproved one gets them at approve-live.
            liveKeys: values['approve-live'] ?? false,
          },
          note: (data) => liveKeysNote(data as CreatedBusinessOutput),
        };
      case 'business approve-live':
        return { method: 'POST', path: `/businesses/${encodeURIComponent(required(id, 'BUSINESS_ID'))}/approve-live` };
      case 'business show':
        return {
          method: 'GET',
          path: `/businesses/${encodeURIComponent(required(id, 'BUSINESS_ID'))}`,
          render: (data) => businessDetails(data as BusinessListItem),
        };
      case 'business list': {
        const query = new URLSearchParams();
        const page = integer(values.page, 'page');
        const limit = integer(values.limit, 'limit');
        if (page !== undefined) query.set('page', String(page));
        if (limit !== undefined) query.set('limit', String(limit));
        return {
          method: 'GET',
          path: `/businesses${query.size > 0 ? `?${query}` : ''}`,
          render: (data) => businessTable(data as BusinessPage),
        };
      }
      case 'key create':
        return {
          method: 'POST',
          path: '/keys',
          body: {
            businessId: required(values.business, '--business'),
            kind: required(values.kind, '--kind'),
            environment: required(values.env, '--env'),
            ...(values.scopes !== undefined ? { scopes: list(values.scopes) } : {}),
            ...(values['ip-allow'] !== undefined ? { ipAllowlist: list(values['ip-allow']) } : {}),
          },
        };
      case 'key suspend':
      case 'key revoke':
      case 'key rotate':
        return { method: 'POST', path: `/keys/${encodeURIComponent(required(id, 'KEY_ID'))}/${action}` };
      case 'key list':
        return {
          method: 'GET',
          path: `/keys?businessId=${encodeURIComponent(required(values.business, '--business'))}`,
        };
      case 'api disable':
      case 'api enable':
        return { method: 'POST', path: `/api/${action}`, body: values.business ? { businessId: values.business } : {} };
      case 'fees set': {
        const body: Record<string, unknown> = {};
        const fields = {
          providerBps: 'provider-bps',
          payerFee: 'payer-fee',
          tofBps: 'tof-bps',
          tteBps: 'tte-bps',
          marginBps: 'margin-bps',
          payoutFeeFlat: 'payout-fee-flat',
          payoutFeeBps: 'payout-fee-bps',
        } as const;
        for (const [field, option] of Object.entries(fields)) {
          const value = integer(values[option], option);
          if (value !== undefined) body[field] = value;
        }
        if (values['revenue-model'] !== undefined) body.revenueModel = values['revenue-model'];
        return {
          method: 'PUT',
          path: `/businesses/${encodeURIComponent(required(values.business, '--business'))}/fees`,
          body,
        };
      }
      case 'wallet create':
        return {
          method: 'POST',
          path: '/wallets',
          body: {
            phone: required(values.phone, '--phone'),
            pin: required(values.pin, '--pin'),
            balance: integer(values.balance, 'balance') ?? 0,
            environment: required(values.env, '--env'),
            ...(values.locked ? { locked: true } : {}),
          },
        };
      case 'wallet credit':
        return {
          method: 'POST',
          path: '/wallets/credit',
          body: {
            phone: required(values.phone, '--phone'),
            amount: integer(required(values.amount, '--amount'), 'amount'),
            environment: required(values.env, '--env'),
          },
        };
      case 'wallet show':
        return {
          method: 'GET',
          path: `/wallets?phone=${encodeURIComponent(required(values.phone, '--phone'))}&environment=${encodeURIComponent(required(values.env, '--env'))}`,
        };
      case 'user create':
        return {
          method: 'POST',
          path: '/users',
          body: {
            businessId: required(values.business, '--business'),
            email: required(values.email, '--email'),
            password: required(values.password, '--password'),
            ...(values.role !== undefined ? { role: values.role } : {}),
          },
        };
      case 'user list':
        return {
          method: 'GET',
          path: `/users?businessId=${encodeURIComponent(required(values.business, '--business'))}`,
        };
      case 'user disable':
        return { method: 'POST', path: `/users/${encodeURIComponent(required(id, 'USER_ID'))}/disable` };
      case 'user reset-password':
        return {
          method: 'POST',
          path: `/users/${encodeURIComponent(required(id, 'USER_ID'))}/reset-password`,
          body: { password: required(values.password, '--password') },
        };
      case 'ledger check':
        return { method: 'GET', path: '/ledger/check', succeeded: (data) => (data as { ok: boolean }).ok };
      default:
        throw new UsageError(command ? `unknown command "${command}"` : 'no command');
    }
  })();
  const key = values['idempotency-key'];
  if (key === undefined) return call;
  if (call.method === 'GET') throw new UsageError('--idempotency-key is for commands that change something');
  if (key === '') throw new UsageError('--idempotency-key must not be empty');
  return { ...call, idempotencyKey: key };
}

function describe(data: unknown): string {
  return JSON.stringify(data, null, 2);
}

export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processOutput: CliOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Attempts of one request whose answer never came (refused, reset, cut, or not within the timeout). */
const ATTEMPTS = 3;
const RETRY_DELAY_MS = 250;
/** How long the CLI waits for an earlier attempt of its write that the API says still runs. */
const IN_PROGRESS_WAIT_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 30_000;
/** The longest delay Node's timers hold; past it a timeout fires at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** ADMIN_TIMEOUT_MS: a server that hangs must not hang the operator's shell (or a script) with it. */
function attemptTimeout(env: NodeJS.ProcessEnv): number {
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
async function sendWithRetries(
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** fetch's own message is "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND...) is its cause. */
function reachFailure(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = cause && typeof cause === 'object' && 'code' in cause ? String(cause.code) : undefined;
  if (code === 'ECONNREFUSED') return 'connection refused (nothing listens there)';
  return code ? `${messageOf(error)} (${code})` : messageOf(error);
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

function noAnswer(error: unknown, timeoutMs: number): string {
  return isTimeout(error) ? `none within ${timeoutMs / 1000} s` : reachFailure(error);
}

/**
 * Runs one CLI command and returns its exit code. Exported so tests can run commands in-process
 * (one real process proves the program; the rest need not pay a Node start each).
 */
export async function runAdminCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  output: CliOutput = processOutput,
): Promise<number> {
  if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
    output.stdout(`${usage}\n`);
    return args.length === 0 ? 2 : 0;
  }
  const json = args.includes('--json');
  let call: Call;
  try {
    call = toCall(args);
  } catch (error) {
    output.stderr(`${error instanceof Error ? error.message : String(error)}\n\n${usage}\n`);
    return 2;
  }
  let timeoutMs: number;
  try {
    timeoutMs = attemptTimeout(env);
  } catch (error) {
    output.stderr(`${messageOf(error)}\n\n${usage}\n`);
    return 2;
  }
  let connection: ReturnType<typeof resolveConnection>;
  try {
    connection = resolveConnection(env);
  } catch (error) {
    if (!(error instanceof ConnectionError)) throw error;
    output.stderr(`${error.message}\n`);
    return 1;
  }
  const { baseUrl: base, token } = connection;
  // A write always carries a key, so sending it again after a lost answer cannot do it twice.
  const key = call.idempotencyKey ?? (call.method === 'GET' ? undefined : `cli-${randomUUID()}`);
  const mayHaveBeenDone = () =>
    output.stderr(
      `It may have been done: run the same command with --idempotency-key ${key} to find out without doing it twice.\n`,
    );
  let response: Response;
  let uncertain: boolean;
  try {
    ({ response, uncertain } = await sendWithRetries(
      `${base}/api/v1/admin${call.path}`,
      {
        method: call.method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(call.body ? { 'content-type': 'application/json' } : {}),
          ...(key !== undefined ? { 'x-idempotency-key': key } : {}),
        },
        ...(call.body ? { body: JSON.stringify(call.body) } : {}),
      },
      timeoutMs,
      output,
    ));
  } catch (error) {
    output.stderr(
      isTimeout(error)
        ? `The API at ${base} did not answer within ${timeoutMs / 1000} s (ADMIN_TIMEOUT_MS).\n`
        : `Cannot reach the API at ${base}: ${reachFailure(error)}\n${connection.startHint}\n`,
    );
    if (key !== undefined) mayHaveBeenDone();
    return 1;
  }
  let bodyError: unknown;
  const payload = (await response.json().catch((error: unknown) => {
    bodyError = error;
    return null;
  })) as { success: true; data: unknown } | { success: false; error: { code: string; message: string } } | null;
  if (response.headers.get('idempotent-replayed') === 'true') {
    output.stderr(
      'Replayed: the answer of an earlier attempt with this idempotency key; nothing was done again ' +
        '(API key texts are shown once, never in a replay: `key rotate` gives a key a new one).\n',
    );
  }
  if (!payload || !payload.success) {
    const error =
      payload && !payload.success
        ? payload.error
        : {
            code: `HTTP_${response.status}`,
            message: isTimeout(bodyError)
              ? `the answer did not arrive in full within ${timeoutMs / 1000} s (ADMIN_TIMEOUT_MS)`
              : 'unexpected answer',
          };
    output.stderr(json ? `${JSON.stringify({ error })}\n` : `Error ${error.code}: ${error.message}\n`);
    // An attempt without an answer, one still running, a server failure (a commit whose
    // acknowledgement was lost) or an answer whose body never came may yet have done it.
    const unknown = uncertain || !payload || error.code === 'IDEMPOTENCY_KEY_IN_PROGRESS' || response.status >= 500;
    if (key !== undefined && unknown) mayHaveBeenDone();
    return 1;
  }
  output.stdout(
    json
      ? `${JSON.stringify(payload.data)}\n`
      : `${call.render ? call.render(payload.data) : describe(payload.data)}\n`,
  );
  const note = json ? undefined : call.note?.(payload.data);
  if (note) output.stderr(`${note}\n`);
  return call.succeeded && !call.succeeded(payload.data) ? 1 : 0;
}

/** Whether this module is the program being run (not imported by a test). */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script || !existsSync(script)) return false;
  return import.meta.url === pathToFileURL(realpathSync(script)).href;
}

if (isEntryPoint()) {
  runAdminCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
