import { parseArgs } from 'node:util';

/** A command line the CLI cannot run: it prints why and the usage, and exits 2. */
export class UsageError extends Error {}

/** Every option of every command: parseArgs reads them all, each command takes the ones it needs. */
const OPTIONS = {
  name: { type: 'string' },
  'approve-live': { type: 'boolean' },
  'verified-name': { type: 'string' },
  'no-shop': { type: 'boolean' },
  business: { type: 'string' },
  kind: { type: 'string' },
  env: { type: 'string' },
  scopes: { type: 'string' },
  'ip-allow': { type: 'string' },
  'expires-in': { type: 'string' },
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
  month: { type: 'string' },
} as const;

export function parseCommandLine(args: string[]) {
  return parseArgs({ args, allowPositionals: true, options: OPTIONS });
}

export type OptionValues = ReturnType<typeof parseCommandLine>['values'];

/** One request to the operator API (/api/v1/admin) and how to show its answer. */
export type Call = {
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

export function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

export function list(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
}

export function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

/** What a command line asks: its action (the second word), an id (the third) and its options. */
export interface CommandInput {
  action: string;
  id: string | undefined;
  values: OptionValues;
}

/** The call one command makes. */
export type Command = (input: CommandInput) => Call;

/** The commands of one group (`business`, `key`...) by their action. */
export type CommandGroup = Readonly<Record<string, Command>>;
