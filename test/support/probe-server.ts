/**
 * A real API process for multi-process tests: the production runtime and app factory, plus the
 * probe routes. Configured by the environment like the server; prints its port when listening.
 * PROBE_CLOCK_MS, when set, stops the clock of the key cache and rate limits at that instant, so
 * processes started with the same value count in one rate-limit window however long a test takes.
 */
import { buildApp } from '../../src/app.js';
import { createRuntime } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { developerModules } from '../../src/modules/index.js';
import { probeRoutes } from './probe-routes.js';

const config = loadConfig();
const stoppedAt = process.env.PROBE_CLOCK_MS ? Number(process.env.PROBE_CLOCK_MS) : undefined;
const runtime = await createRuntime(config, stoppedAt === undefined ? {} : { now: () => stoppedAt });
const app = await buildApp(runtime, { developerRoutes: [...developerModules, probeRoutes] });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => runtime.close())
    .then(() => process.exit(0));
});
