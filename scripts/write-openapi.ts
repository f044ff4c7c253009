/** `npm run openapi`: writes openapi.json from the route schemas (a test fails when it drifts). */
import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.js';
import { createRuntime } from '../src/bootstrap.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/connect.js';
import { developerModules } from '../src/modules/index.js';

export const OPENAPI_FILE = 'openapi.json';

const config = loadConfig({ LOG_LEVEL: 'silent', SEED_DEMO: 'false' });
const runtime = await createRuntime(config, {
  database: await openDatabase({ kind: 'pglite' }),
  adminToken: 'unused-admin-token',
});
const app = await buildApp(runtime, { developerRoutes: developerModules });
await app.ready();
writeFileSync(OPENAPI_FILE, `${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
await runtime.close();
process.stdout.write(`wrote ${OPENAPI_FILE}\n`);
