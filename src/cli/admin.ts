/**
 * Admin CLI: a thin client of the operator API (/api/v1/admin).
 *   npm run --silent admin -- <command> [options] [--json]
 * It finds the server the way `npm start` runs it: the same PORT, HOST, DATA_DIR and ADMIN_TOKEN,
 * with the server's defaults (connection.ts); ADMIN_URL points it elsewhere.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseCommandLine, UsageError, type Call, type CommandGroup } from './command-line.js';
import { businessCommands } from './commands/businesses.js';
import { keyCommands } from './commands/keys.js';
import { partitionCommands } from './commands/partitions.js';
import { userCommands } from './commands/users.js';
import { walletCommands } from './commands/wallets.js';
import { ConnectionError, resolveConnection } from './connection.js';
import { attemptTimeout, isTimeout, messageOf, reachFailure, sendWithRetries, type CliOutput } from './send.js';

export type { CliOutput };

const usage = `Usage: npm run --silent admin -- <command> [options] [--json]

  business create --name NAME [--approve-live [--verified-name NAME]] [--no-shop]
                                    live keys only with --approve-live (else: at approve-live)
  business approve-live BUSINESS_ID [--verified-name NAME]
                                    issues the live keys the business lacks, shown once; the
                                    name payers see (default: as verified before, else its name)
  business list [--page N] [--limit N]
                                    LIVE: approved, requested (asked from the dashboard) or no
  business show BUSINESS_ID         one business, with its request for live access
  key create --business ID --kind secret|publishable --env test|live [--name NAME] [--scopes a,b] [--ip-allow ADDR,...]
  key suspend KEY_ID | key revoke KEY_ID | key rotate KEY_ID
  key roll KEY_ID [--expires-in SECONDS]
                                    a new key now; the old one works SECONDS more (0-604800)
  key list --business ID
  api disable [--business ID] | api enable [--business ID]
  fees set --business ID [--provider-bps N] [--payer-fee N] [--tof-bps N] [--tte-bps N]
           [--revenue-model COMMISSION|MARGIN] [--margin-bps N] [--payout-fee-flat C] [--payout-fee-bps N]
  wallet create --phone P --pin N --balance C --env test|live [--locked]
  wallet credit --phone P --amount C --env test|live
  wallet show --phone P --env test|live
  ledger check                      exits 1 when an invariant of the ledger does not hold
  partitions list                   each month table: rows (estimated), bytes, attached or detached;
                                    rows in the default partitions (a month made late)
  partitions archive ledger_postings|balance_transactions --month YYYY-MM
                                    keeps the month's totals for \`ledger check\`, then detaches it
                                    (not the last 12 months): dump it, verify, drop it (operations.md)
  user create --business ID --email E --password P [--role owner|admin|developer|finance|support|viewer]
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

/** Each command group by its first word. */
const GROUPS: Readonly<Record<string, CommandGroup>> = {
  ...businessCommands,
  ...keyCommands,
  ...walletCommands,
  ...userCommands,
  ...partitionCommands,
};

function toCall(args: string[]): Call {
  const { values, positionals } = parseCommandLine(args);
  const [group, action, id] = positionals;
  const command = `${group ?? ''} ${action ?? ''}`.trim();
  const commands = group !== undefined && Object.hasOwn(GROUPS, group) ? GROUPS[group] : undefined;
  // Own keys only: `key constructor` is no command.
  if (!commands || action === undefined || !Object.hasOwn(commands, action)) {
    throw new UsageError(command ? `unknown command "${command}"` : 'no command');
  }
  const call = commands[action]!({ action, id, values });
  const key = values['idempotency-key'];
  if (key === undefined) return call;
  if (call.method === 'GET') throw new UsageError('--idempotency-key is for commands that change something');
  if (key === '') throw new UsageError('--idempotency-key must not be empty');
  return { ...call, idempotencyKey: key };
}

function describe(data: unknown): string {
  return JSON.stringify(data, null, 2);
}

const processOutput: CliOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

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
