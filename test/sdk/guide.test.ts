/**
 * The SDK guides' first hour, as written: the install lines name what works today (the packed
 * tarball; the registry name only "once published"), and the sandbox end-to-end block of
 * docs/sdk.md and of the SDK's README (the same block in both) runs against a test server. Only
 * the addresses change, as in the README tour's test: the guide's server and its receiver's URL.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

const run = promisify(execFile);
const REPO = path.resolve(new URL('../..', import.meta.url).pathname);
const GUIDES = ['docs/sdk.md', 'packages/sdk/README.md'];
const sdkPackage = JSON.parse(readFileSync(path.join(REPO, 'packages/sdk/package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
};

/** The addresses the block is written for: `npm start`'s server, a receiver somewhere public. */
const GUIDE_SERVER = 'http://localhost:8080';
const GUIDE_RECEIVER = 'https://example.com/hooks';

function read(file: string): string {
  return readFileSync(path.join(REPO, file), 'utf8');
}

/** The ```js block between the sandbox markers of a guide. */
function sandboxBlock(file: string): string {
  const text = read(file);
  const from = text.indexOf('<!-- sandbox:start -->');
  const to = text.indexOf('<!-- sandbox:end -->');
  assert.ok(from >= 0 && to > from, `${file} has a block between <!-- sandbox:start --> and <!-- sandbox:end -->`);
  const blocks = [...text.slice(from, to).matchAll(/```js\n([\s\S]*?)```/g)];
  assert.equal(blocks.length, 1, `one js block between the markers of ${file}`);
  return blocks[0]![1]!;
}

describe('the SDK guides', () => {
  test('install what works today: the tarball `npm pack` makes, the registry name only once published', () => {
    // npm names a scoped package's tarball scope-name-version.tgz, without the @.
    const tarball = `${sdkPackage.name.replace(/^@/, '').replace('/', '-')}-${sdkPackage.version}.tgz`;
    assert.equal(tarball, 'commerce-developer-api-sdk-0.2.0.tgz');
    assert.equal(sdkPackage.license, 'MIT');
    for (const file of GUIDES) {
      const text = read(file);
      assert.ok(
        text.includes(`npm install ./${tarball}`) || text.includes(`/${tarball}`),
        `${file} installs ${tarball}`,
      );
      assert.match(text, /npm pack/, `${file} says how the tarball is made`);
      for (const line of text.split('\n').filter((l) => l.includes(`npm install ${sdkPackage.name}`))) {
        assert.match(line, /once published/i, `${file}: the registry name comes with "once published": ${line}`);
      }
      assert.doesNotMatch(text, /@commerce\/sdk/, `${file}: no name under a scope the project does not hold`);
    }
  });

  test('the sandbox end-to-end block is the same in both guides, about 15 lines', () => {
    const [first, second] = GUIDES.map(sandboxBlock);
    assert.equal(first, second);
    assert.ok(first!.trim().split('\n').length <= 16, first);
  });

  describe('the sandbox end-to-end block, run as written', () => {
    let t: TestApp;
    let receiver: Receiver;
    let output = '';
    let business: Awaited<ReturnType<TestApp['createBusiness']>>;
    beforeAll(async () => {
      // Only for the receiver's local address, which replaces the guide's public one.
      t = await startTestApp({ config: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
      business = await t.createBusiness();
      receiver = await startReceiver('/hooks');
      const block = sandboxBlock('docs/sdk.md');
      const local = block.replaceAll(GUIDE_SERVER, t.baseUrl).replaceAll(GUIDE_RECEIVER, receiver.url);
      assert.doesNotMatch(local, /localhost:8080|example\.com/, `an address the test did not replace:\n${local}`);
      // From the repository's root, as a newcomer runs it in the workspace (the package resolves by name).
      const ran = await run(process.execPath, ['--input-type=module', '-e', local], {
        cwd: REPO,
        env: { ...process.env, NODE_OPTIONS: '', COMMERCE_API_KEY: business.keys.secretTest },
        timeout: 60_000,
      });
      output = ran.stdout + ran.stderr;
    });
    afterAll(async () => {
      await receiver?.close();
      await t?.close();
    });

    test('it pays an intent in the sandbox and prints its events and its endpoint deliveries', () => {
      assert.match(output, /^intent PAID$/m, output);
      assert.match(output, /^event payment\.confirmed evt_\S+\nevent payment\.created evt_\S+$/m, output);
      const deliveries = output.split('\n').filter((line) => line.startsWith('delivery '));
      assert.deepEqual(deliveries.map((line) => line.split(' ')[1]).sort(), ['payment.confirmed', 'payment.created']);
      assert.match(output, /^endpoint \S+ secret \S+$/m);
    });

    test('its payout is one the intent covers: the balance stays positive', async () => {
      const payout = /^payout PENDING (\d+) of (\d+)$/m.exec(output);
      assert.ok(payout, output);
      const [totalDebited, available] = [Number(payout[1]), Number(payout[2])];
      assert.ok(totalDebited <= available, `${totalDebited} debited of ${available}`);
      assert.ok(available <= 150_000, 'what the 1,500 MRU intent put in');
      const balance = await t.request<{ data: { available: number } }>('GET', '/api/v1/dev/balance', {
        key: business.keys.secretTest,
      });
      assert.equal(balance.body.data.available, available - totalDebited);
    });
  });
});
