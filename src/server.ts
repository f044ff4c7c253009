import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { serializeLoggedError } from './http/error-handler.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openConfiguredDatabase } from './db/configured.js';
import type { CreatedBusiness } from './modules/businesses/service.js';
import type { Worker } from './worker/worker.js';

/**
 * What a person starting the server reads: one plain line per step, then the demo keys as a
 * block to copy. Plain text on stdout beside the JSON log lines, never inside one (a key inside
 * JSON comes out with escaped newlines, and secrets stay out of the logs).
 */
const stdout = pino.destination({ dest: 1 });

function say(line = ''): void {
  // Through the log stream itself, so these lines and the log lines come out in order.
  stdout.write(`${line}\n`);
}

const ANY_ADDRESS = ['0.0.0.0', '::'];
const LOOPBACK = ['127.0.0.1', '::1', 'localhost'];

function displayUrl(config: Config, address: AddressInfo | string | null): string {
  const port = typeof address === 'object' && address ? address.port : config.port;
  const anyHost = [...ANY_ADDRESS, ...LOOPBACK].includes(config.host);
  const host = anyHost ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${port}`;
}

/**
 * Where the listener actually is, beside the URL to open (decision 090): "localhost" in the ready
 * line is right for both, so this line says whether other machines can reach the server.
 */
function listeningLine(config: Config, address: AddressInfo | string | null): string {
  if (typeof address !== 'object' || !address) return `listening on ${String(address ?? config.host)}`;
  const where = `${address.address} port ${address.port}`;
  if (ANY_ADDRESS.includes(address.address))
    return `listening on every interface (${where}): other machines on the network can reach it`;
  if (LOOPBACK.includes(config.host))
    return `listening on ${where}: this machine only (HOST=0.0.0.0 lets other machines in)`;
  return `listening on ${where}`;
}

function firstStartBlock(
  baseUrl: string | undefined,
  demo: CreatedBusiness | null,
  admin: { token: string; file: string } | undefined,
): string[] {
  const lines: string[] = [];
  if (demo) {
    const key = (kind: string) => demo.keys.find((k) => k.kind === kind && k.environment === 'test')?.key ?? '(none)';
    lines.push(
      '',
      `The demo business "${demo.business.name}" (${demo.business.id}) has these sandbox keys. They are shown only once: copy them now.`,
      '',
      `  KEY=${key('secret')}`,
      `  PUBLISHABLE_KEY=${key('publishable')}`,
      '',
    );
    if (baseUrl) {
      lines.push(
        'Paste the KEY= line into your shell, then try:',
        `  curl -s ${baseUrl}/api/v1/dev/intents -H "Authorization: Bearer $KEY"`,
        '',
      );
    }
    // The dashboard needs a user, and a user needs the business id, which nothing else shows.
    lines.push(
      baseUrl
        ? `To sign in at ${baseUrl}/dashboard, create your user:`
        : 'To sign in to the dashboard, create your user:',
      `  npm run --silent admin -- user create --business ${demo.business.id} --email you@example.com --password 'a long passphrase'`,
      '',
    );
  }
  if (admin) lines.push(`Admin token (saved in ${admin.file}): ${admin.token}`, '');
  return lines;
}

/** The process: config, API and/or worker, signals. `--api` or `--worker` runs one of them. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel, serializers: { err: serializeLoggedError } }, stdout);
  const args = new Set(process.argv.slice(2));
  const runApi = !args.has('--worker') || args.has('--api');
  const runWorker = !args.has('--api') || args.has('--worker');

  const log = { warn: (message: string) => logger.warn(message), info: (message: string) => logger.info(message) };
  // The database opens while the application's modules load: the embedded database compiles its
  // WebAssembly on other threads meanwhile (decision 066).
  const database = openConfiguredDatabase(config, { progress: say, log });
  database.catch(() => {}); // awaited below, once the modules are in
  const [{ buildApp }, { createRuntime, resolveAdminToken, seedDemoBusiness }, { developerModules }, { startWorker }] =
    await Promise.all([
      import('./app.js'),
      import('./bootstrap.js'),
      import('./modules/index.js'),
      import('./worker/worker.js'),
    ]);
  const admin = resolveAdminToken(config);
  const runtime = await createRuntime(config, {
    database: await database,
    adminToken: admin.token,
    progress: say,
    log,
  });
  const adminTokenFile = `${config.dataDir.replace(/\/+$/, '')}/admin-token`;
  if (admin.generated) logger.info({ file: adminTokenFile }, 'generated an admin token');
  let demo: CreatedBusiness | null = null;
  if (config.seedDemo) {
    demo = await seedDemoBusiness(runtime);
    if (demo) logger.info({ businessId: demo.business.id }, 'created the demo business with sandbox keys');
  }

  const app = runApi ? await buildApp(runtime, { logger, developerRoutes: developerModules }) : undefined;
  const worker: Worker | undefined = runWorker ? startWorker(runtime, logger) : undefined;
  let baseUrl: string | undefined;
  let listening: string | undefined;
  if (app) {
    await app.listen({ port: config.port, host: config.host });
    baseUrl = displayUrl(config, app.server.address());
    listening = listeningLine(config, app.server.address());
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: no new requests, finishing in-flight work');
    const force = setTimeout(() => {
      logger.error('shutdown took over 30 s; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    await app?.close();
    await worker?.stop();
    await runtime.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // Only now: whoever waits for "ready" or "started" may send SIGTERM at once, and must find the handler.
  const seconds = process.uptime().toFixed(1);
  const parts = [runApi ? 'API' : undefined, runWorker ? 'worker' : undefined].filter(Boolean).join(' and ');
  say(baseUrl ? `ready on ${baseUrl} (${parts}, ${seconds} s)` : `ready: ${parts} running (${seconds} s)`);
  if (listening) say(listening);
  for (const line of firstStartBlock(
    baseUrl,
    demo,
    admin.generated ? { token: admin.token, file: adminTokenFile } : undefined,
  ))
    say(line);
  logger.info({ api: runApi, worker: runWorker, database: runtime.database.kind }, 'started');
}

main().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
