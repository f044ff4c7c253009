import { assertTestKey, listen } from './listen.js';
import { listenSecretFor, type ListenSecret } from './listen-secret.js';

const USAGE = `Usage: commerce listen --api-key sk_test_... --forward-to http://localhost:3000/hooks [--events payment.*,order.new] [--base-url http://localhost:8080]
       commerce listen --api-key sk_test_... --print-secret
The API key may come from COMMERCE_API_KEY, the base URL from COMMERCE_BASE_URL.`;

function flag(args: string[], name: string): string | undefined {
  const index = args.indexOf(`--${name}`);
  if (index >= 0) return args[index + 1];
  const inline = args.find((arg) => arg.startsWith(`--${name}=`));
  return inline?.slice(name.length + 3);
}

function usage(code: number): number {
  process.stderr.write(`${USAGE}\n`);
  return code;
}

/** The key's stored listen secret (made on first use); refuses a key listen would refuse. */
function storedSecret(apiKey: string): ListenSecret {
  // Checked before anything is stored: no file entry for a live key.
  assertTestKey(apiKey);
  return listenSecretFor(apiKey);
}

/** Only the secret on stdout, for `WEBHOOK_SECRET=$(commerce listen --print-secret)`. */
function printSecret(apiKey: string): number {
  const stored = storedSecret(apiKey);
  if (stored.created) process.stderr.write(`Created a listen secret for this key in ${stored.file}\n`);
  process.stdout.write(`${stored.secret}\n`);
  return 0;
}

async function forwardEvents(apiKey: string, forwardTo: string, args: string[]): Promise<number> {
  const stored = storedSecret(apiKey);
  process.stdout.write(
    stored.created
      ? `Your listen secret is ${stored.secret}; it stays the same at every start (commerce listen --print-secret shows it).\n`
      : 'Signing with your listen secret (commerce listen --print-secret shows it).\n',
  );
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.once('SIGTERM', () => controller.abort());
  const events = flag(args, 'events');
  const baseUrl = flag(args, 'base-url') ?? process.env.COMMERCE_BASE_URL;
  await listen({
    apiKey,
    forwardTo,
    secret: stored.secret,
    signal: controller.signal,
    ...(baseUrl ? { baseUrl } : {}),
    ...(events ? { events: events.split(',').map((name) => name.trim()) } : {}),
  });
  return 0;
}

export async function main(args: string[]): Promise<number> {
  if (args[0] !== 'listen') return usage(args[0] === undefined || args[0] === '--help' ? 0 : 2);
  const apiKey = flag(args, 'api-key') ?? process.env.COMMERCE_API_KEY;
  const forwardTo = flag(args, 'forward-to');
  try {
    if (apiKey && args.includes('--print-secret')) return printSecret(apiKey);
    if (!apiKey || !forwardTo) return usage(2);
    return await forwardEvents(apiKey, forwardTo, args);
  } catch (error) {
    process.stderr.write(`commerce listen: ${(error as Error).message}\n`);
    return 1;
  }
}
