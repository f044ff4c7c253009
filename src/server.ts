import pino from 'pino';
import { serializeLoggedError } from './http/error-handler.js';
import { buildApp } from './app.js';
import { createRuntime, resolveAdminToken, seedDemoBusiness } from './bootstrap.js';
import { ConfigError, loadConfig } from './config.js';
import { developerModules } from './modules/index.js';
import { startWorker, type Worker } from './worker/worker.js';

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
  const logger = pino({ level: config.logLevel, serializers: { err: serializeLoggedError } });
  const args = new Set(process.argv.slice(2));
  const runApi = !args.has('--worker') || args.has('--api');
  const runWorker = !args.has('--api') || args.has('--worker');

  const admin = resolveAdminToken(config);
  const runtime = await createRuntime(config, { adminToken: admin.token });
  if (admin.generated) {
    logger.warn(`Generated an admin token (saved in ${config.dataDir}/admin-token): ${admin.token}`);
  }
  if (config.seedDemo) {
    const demo = await seedDemoBusiness(runtime);
    if (demo) {
      const sandboxKeys = demo.keys.filter((key) => key.environment === 'test');
      logger.warn(
        { businessId: demo.business.id },
        `Created the demo business "${demo.business.name}". Its sandbox keys are shown once:\n${sandboxKeys
          .map((key) => `  ${key.kind.padEnd(11)} ${key.key}`)
          .join('\n')}`,
      );
    }
  }

  const app = runApi ? await buildApp(runtime, { logger, developerRoutes: developerModules }) : undefined;
  const worker: Worker | undefined = runWorker ? startWorker(runtime, logger) : undefined;
  if (app) await app.listen({ port: config.port, host: config.host });
  logger.info({ api: runApi, worker: runWorker, database: runtime.database.kind }, 'started');

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
}

main().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
