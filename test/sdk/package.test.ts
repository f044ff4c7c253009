/**
 * The SDK as a user gets it: `npm pack` of packages/sdk, installed from the tarball into a project
 * outside the repository, run with plain `node` as ESM and as CommonJS against a test server, and
 * typechecked with `moduleResolution` node16 (ESM and CJS files) and bundler.
 *
 * It packs a copy of packages/sdk, not the workspace itself: `prepack` rebuilds dist/, and other
 * test files import the workspace's dist/ meanwhile. The copy borrows the repository's
 * node_modules (TypeScript, @types/node) through a symlink, which `npm pack` leaves out.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { promisify } from 'node:util';
import {
  newEndpointSecret,
  signatureHeader,
  standardSignatureHeader,
  SIGNATURE_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  TIMESTAMP_HEADER,
} from '../../src/modules/webhooks/signing.js';
import { startTestApp, type TestApp, type TestBusiness } from '../support/harness.js';

const run = promisify(execFile);
const SDK = realpathSync(new URL('../../packages/sdk', import.meta.url));
const REPO = path.resolve(SDK, '..', '..');
const TSC = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');

/** The child's environment without npm's own variables (`npm test` sets some that point at the repository). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  return { ...env, ...extra };
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, {
    cwd,
    env: cleanEnv(),
    shell: process.platform === 'win32',
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** A signed delivery exactly as the server makes one (src/modules/webhooks/signing.ts), per scheme. */
function signedDeliveries() {
  const body = JSON.stringify({ id: 'evt_pack_1', event: 'ping', data: {}, sequence: 1 });
  const timestamp = Math.floor(Date.now() / 1000);
  const commerceSecret = newEndpointSecret('commerce');
  const standardSecret = newEndpointSecret('standard');
  return {
    body,
    commerce: {
      secret: commerceSecret,
      headers: {
        [SIGNATURE_HEADER.toLowerCase()]: signatureHeader([commerceSecret], timestamp, body),
        [TIMESTAMP_HEADER.toLowerCase()]: String(timestamp),
      },
    },
    standard: {
      secret: standardSecret,
      headers: {
        [STANDARD_ID_HEADER]: 'msg_pack_1',
        [STANDARD_TIMESTAMP_HEADER]: String(timestamp),
        [STANDARD_SIGNATURE_HEADER]: standardSignatureHeader([standardSecret], 'msg_pack_1', timestamp, body),
      },
    },
  };
}

/**
 * The body of both scripts: `load` is how each module system loads a specifier. The webhook
 * subpath is loaded first, so the CommonJS script can tell that it brought no HTTP client along.
 */
const SCRIPT_BODY = `
const input = JSON.parse(process.env.PACK_TEST_INPUT);
const webhooks = await load('@commerce-developer-api/sdk/webhooks');
const clientLoadedByWebhooks = loadedClient();
const sdk = await load('@commerce-developer-api/sdk');

const commerce = new sdk.Commerce(input.apiKey, { baseUrl: input.baseUrl });
const intent = await commerce.intents.create({ amount: 1234, label: input.label });
await commerce.intents.simulate(intent.referenceNumber, { outcome: 'success' });
const paid = await commerce.intents.retrieve(intent.referenceNumber);

const { body, commerce: plain, standard } = input.deliveries;
const fromMain = await sdk.verifyWebhook(body, plain.headers, plain.secret);
const fromSubpath = await webhooks.verifyWebhook(body, standard.headers, standard.secret);
const refused = await webhooks.verifyWebhook(body + ' ', plain.headers, plain.secret).catch((error) => error);

process.stdout.write(JSON.stringify({
  status: paid.status,
  events: [fromMain.event, fromSubpath.event],
  refusedCode: refused.code,
  refusedIsCommerceError: refused instanceof sdk.CommerceError && refused instanceof webhooks.WebhookVerificationError,
  clientLoadedByWebhooks,
}));
`;

const ESM_SCRIPT = `const load = (name) => import(name);
// ESM keeps no cache to look into; the CommonJS script checks what the subpath loads.
const loadedClient = () => null;
${SCRIPT_BODY}`;

const CJS_SCRIPT = `const load = async (name) => require(name);
const loadedClient = () => Object.keys(require.cache).some((file) => /[\\\\/]client\\.js$/.test(file));
(async () => {
${SCRIPT_BODY}
})().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});`;

/** Uses the types, and proves they are not \`any\`: each @ts-expect-error must meet an error. */
const TYPES_USE = (importLines: string) => `${importLines}
export async function use(apiKey: string, body: string, headers: Record<string, string>): Promise<string> {
  const commerce = new Commerce(apiKey, { baseUrl: 'http://localhost:8080' });
  const intent = await commerce.intents.create({ amount: 100 });
  // @ts-expect-error the amount is a number
  await commerce.intents.create({ amount: '100' });
  const event = await verifyWebhook(body, headers, 'secret');
  try {
    await commerce.intents.retrieve(intent.referenceNumber);
  } catch (error) {
    if (error instanceof CommerceError) {
      const code: ErrorCode = error.code;
      // @ts-expect-error not a code of the SDK
      const wrong: ErrorCode = 'NOT_A_CODE';
      return code + wrong;
    }
  }
  return event.event;
}
`;
const ESM_IMPORTS = `import { Commerce, CommerceError, type ErrorCode } from '@commerce-developer-api/sdk';
import { verifyWebhook } from '@commerce-developer-api/sdk/webhooks';`;
// In a .cts file this compiles to require(): the "require" condition and its declarations.
const CJS_IMPORTS = `import { Commerce, CommerceError, type ErrorCode } from '@commerce-developer-api/sdk';
import webhooks = require('@commerce-developer-api/sdk/webhooks');
const { verifyWebhook } = webhooks;`;

function tsconfig(options: Record<string, unknown>, files: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      // A Node project's settings: no DOM library, Node's own types.
      lib: ['ES2023'],
      types: ['node'],
      typeRoots: [path.join(REPO, 'node_modules', '@types')],
      ...options,
    },
    files,
  });
}

describe('the SDK package, installed from its tarball outside the repository', () => {
  let t: TestApp;
  let business: TestBusiness;
  let work: string;
  let project: string;
  beforeAll(async () => {
    work = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'commerce-sdk-pack-')));
    t = await startTestApp({ config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' } });
    business = await t.createBusiness();
  });
  afterAll(async () => {
    await t.close();
    rmSync(work, { recursive: true, force: true });
  });

  test('npm pack builds a tarball with the ESM and CommonJS builds, their declarations, README and CHANGELOG', async () => {
    const copy = path.join(work, 'sdk');
    cpSync(SDK, copy, {
      recursive: true,
      filter: (source) => !['dist', 'node_modules'].includes(path.basename(source)),
    });
    // A directory junction on Windows needs no special rights; elsewhere the type is ignored.
    symlinkSync(path.join(REPO, 'node_modules'), path.join(copy, 'node_modules'), 'junction');
    const packed = path.join(work, 'packed');
    mkdirSync(packed);
    await npm(['pack', '--pack-destination', packed, '--prefer-offline'], copy);
    const [tarball] = readdirSync(packed);
    assert.equal(tarball, 'commerce-developer-api-sdk-0.2.0.tgz');
    // The README's install lines are these two steps: npm pack in packages/sdk, then that tarball.
    const install = /## Install[\s\S]*?```sh\n([\s\S]*?)```/.exec(
      readFileSync(path.join(SDK, 'README.md'), 'utf8'),
    )?.[1];
    assert.ok(install?.split('\n')[0]?.startsWith('cd packages/sdk && npm pack'), install);
    assert.match(install!, new RegExp(`^cd \\S+ && npm install \\S+/${tarball.replaceAll('.', '\\.')}$`, 'm'));

    project = path.join(work, 'app');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    await npm(['install', '--offline', '--no-audit', '--no-fund', path.join(packed, tarball)], project);
    const installed = path.join(project, 'node_modules', '@commerce-developer-api', 'sdk');
    for (const file of [
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'bin/commerce.mjs',
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/esm/webhooks.js',
      'dist/esm/cli.js',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/webhooks.d.ts',
      'dist/cjs/package.json',
    ]) {
      assert.ok(existsSync(path.join(installed, file)), `${file} is in the package`);
    }
    assert.ok(!existsSync(path.join(installed, 'src')), 'no sources');
    assert.ok(!existsSync(path.join(installed, 'scripts')), 'no build scripts');
    assert.ok(!existsSync(path.join(installed, 'node_modules')), 'no dependencies');
  });

  for (const [kind, file, script] of [
    ['ESM', 'pay.mjs', ESM_SCRIPT],
    ['CommonJS', 'pay.cjs', CJS_SCRIPT],
  ] as const) {
    test(`plain node, ${kind}: pays an intent and verifies both signature schemes`, async () => {
      assert.ok(project, 'the package is installed');
      writeFileSync(path.join(project, file), script);
      const input = {
        apiKey: business.keys.secretTest,
        baseUrl: t.baseUrl,
        label: kind,
        deliveries: signedDeliveries(),
      };
      // Async: this process serves the script's requests meanwhile.
      const { stdout } = await run(process.execPath, [file], {
        cwd: project,
        env: cleanEnv({ PACK_TEST_INPUT: JSON.stringify(input) }),
      });
      const result = JSON.parse(stdout) as Record<string, unknown>;
      assert.deepEqual(result, {
        status: 'PAID',
        events: ['ping', 'ping'],
        refusedCode: 'NO_MATCHING_SIGNATURE',
        refusedIsCommerceError: true,
        clientLoadedByWebhooks: kind === 'ESM' ? null : false,
      });
    });
  }

  test('the types resolve with moduleResolution node16 (ESM and CJS files) and bundler', async () => {
    assert.ok(project, 'the package is installed');
    writeFileSync(path.join(project, 'esm.mts'), TYPES_USE(ESM_IMPORTS));
    writeFileSync(path.join(project, 'cjs.cts'), TYPES_USE(CJS_IMPORTS));
    writeFileSync(path.join(project, 'app.ts'), TYPES_USE(ESM_IMPORTS));
    // node16 also checks the SDK's declarations themselves (skipLibCheck off): both builds' are in its program.
    writeFileSync(
      path.join(project, 'tsconfig.node16.json'),
      tsconfig({ module: 'Node16', moduleResolution: 'Node16', skipLibCheck: false }, ['esm.mts', 'cjs.cts']),
    );
    writeFileSync(
      path.join(project, 'tsconfig.bundler.json'),
      tsconfig({ module: 'ESNext', moduleResolution: 'Bundler', skipLibCheck: true }, ['app.ts']),
    );
    const expected = {
      'tsconfig.node16.json': ['cjs/index.d.ts', 'cjs/webhooks.d.ts', 'esm/index.d.ts', 'esm/webhooks.d.ts'],
      'tsconfig.bundler.json': ['esm/index.d.ts', 'esm/webhooks.d.ts'],
    };
    await Promise.all(
      Object.entries(expected).map(async ([config, entries]) => {
        const checked = await run(process.execPath, [TSC, '-p', config, '--listFiles'], { cwd: project }).catch(
          (error: { stdout: string }) => assert.fail(`${config}: ${error.stdout.slice(-3000)}`),
        );
        // Each import found the declarations of its own condition, in the installed package.
        const entryFiles = checked.stdout
          .split(/\r?\n/)
          .map((file) =>
            path.relative(path.join(project, 'node_modules', '@commerce-developer-api', 'sdk', 'dist'), file),
          )
          .map((file) => file.split(path.sep).join('/'))
          .filter((file) => /^(esm|cjs)\/(index|webhooks)\.d\.ts$/.test(file))
          .sort();
        assert.deepEqual(entryFiles, entries, config);
      }),
    );
  });
});
