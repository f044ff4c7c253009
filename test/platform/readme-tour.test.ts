/**
 * The README's 10-minute tour, run as written against a fresh server started the way `npm start`
 * starts it: every ```sh block of the tour in order. A block marked `<!-- tour:background -->`
 * runs in its own terminal (a process of its own, waited for until it says it is ready); the
 * others run as one bash script with `set -e`, so their variables carry over as in one terminal.
 * Only the addresses change: the README's server and receiver ports become free ones.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { FormClient } from '../dashboard/support.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { sendRequest } from '../support/harness.js';
import {
  ensureBuilt,
  freePort,
  keepOutput,
  poll,
  start,
  stop,
  type StartedProcess,
} from '../support/started-server.js';

const root = process.cwd();

/** The addresses the README is written for: a newcomer's server and receiver. */
const README_SERVER = 'http://localhost:8080';
const README_RECEIVER_PORT = 3000;

/** What a background block prints once it is ready: the receiver, `commerce listen`. */
const READY_LINE = /^(listening on |Ready\. )/m;

interface TourBlock {
  commands: string;
  background: boolean;
}

/** The README between the tour's markers. */
function tourSection(): string {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const from = readme.indexOf('<!-- tour:start -->');
  const to = readme.indexOf('<!-- tour:end -->');
  assert.ok(from >= 0 && to > from, 'the README has a tour between <!-- tour:start --> and <!-- tour:end -->');
  return readme.slice(from, to);
}

/** Every fenced block of the tour, in order; each must be a shell block. */
function tourBlocks(section: string): TourBlock[] {
  const blocks = [...section.matchAll(/(<!-- tour:background -->\s*)?```(\w*)\n([\s\S]*?)```/g)].map((match) => {
    assert.equal(match[2], 'sh', `a tour block the test would not run:\n${match[0]}`);
    return { commands: match[3]!, background: match[1] !== undefined };
  });
  const markers = section.split('<!-- tour:background -->').length - 1;
  assert.equal(
    blocks.filter((block) => block.background).length,
    markers,
    'each <!-- tour:background --> is right before a block',
  );
  return blocks;
}

/** The tour's commands pointed at this test's server and receiver. */
function localized(commands: string, serverUrl: string, receiverPort: number): string {
  const local = commands
    .replaceAll(README_SERVER, serverUrl)
    .replaceAll(`localhost:${README_RECEIVER_PORT}`, `localhost:${receiverPort}`)
    .replaceAll(`PORT=${README_RECEIVER_PORT}`, `PORT=${receiverPort}`);
  assert.doesNotMatch(local, /\b(8080|3000)\b/, `an address the test did not replace:\n${local}`);
  return local;
}

async function within<T>(what: string, promise: Promise<T>, timeoutMs: number, output: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no end of ${what} after ${timeoutMs} ms:\n${output()}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface ApiEvent {
  id: string;
  type: string;
  object: string;
  sequence: number;
  payload: { data: { status: string } };
}

interface ApiIntent {
  referenceNumber: string;
  status: string;
  amount: number;
  payment: { amountPaid: number } | null;
  totalAmountRefunded: number;
}

interface Page<T> {
  success: boolean;
  data: { items: T[] };
}

describe('the README tour, run as written against a fresh server', () => {
  const background: StartedProcess[] = [];
  let workDir: string;
  let database: TestDatabase | undefined;
  let server: StartedProcess;
  let serverUrl: string;
  let receiverPort: number;
  let shellEnv: NodeJS.ProcessEnv;
  let tour: StartedProcess;
  let tourExitCode: number | null;

  beforeAll(async () => {
    ensureBuilt();
    workDir = mkdtempSync(path.join(os.tmpdir(), 'devapi-readme-tour-'));
    database = process.env.TEST_DATABASE_URL ? await createTestDatabase() : undefined;
    // A port known up front: the admin CLI of the tour finds the server through the same PORT.
    const serverEnv: NodeJS.ProcessEnv = {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      DATA_DIR: path.join(workDir, 'data'),
      DATABASE_URL: database?.url ?? '',
      ADMIN_TOKEN: '',
      REDIS_URL: '',
      SEED_DEMO: '',
      LOG_LEVEL: '',
    };
    server = start(workDir, serverEnv);
    await poll('"ready on" line', server, () => (/^ready on /m.test(server.output()) ? true : undefined));
    serverUrl = `http://127.0.0.1:${serverEnv.PORT}`;
    const key = await poll(
      'sandbox key',
      server,
      () => /^ {2}KEY=(sk_test_[0-9A-Za-z]{40})$/m.exec(server.output())?.[1],
    );
    receiverPort = await freePort();
    // As in a terminal where the banner's KEY= line was pasted; the listen secret in a config
    // directory of the test's own, never the user's ~/.config.
    shellEnv = { ...process.env, ...serverEnv, KEY: key, COMMERCE_CONFIG_DIR: path.join(workDir, 'config') };
    delete shellEnv.NODE_OPTIONS;

    const blocks = tourBlocks(tourSection());
    assert.ok(blocks.some((block) => block.background) && blocks.some((block) => !block.background));
    // One after another, each ready before the next starts: the receiver's --print-secret makes
    // the listen secret that `commerce listen` then signs with.
    for (const [index, block] of blocks.filter((b) => b.background).entries()) {
      const child = spawn('bash', ['-c', localized(block.commands, serverUrl, receiverPort)], {
        cwd: root,
        env: shellEnv,
        detached: true, // a group of its own: stopping it stops what its shell started
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const started = keepOutput(`background block ${index + 1} (${block.commands.trim()})`, child, true);
      background.push(started);
      await poll('its ready line', started, () => (READY_LINE.test(started.output()) ? true : undefined));
    }

    const script = blocks
      .filter((block) => !block.background)
      .map((block) => localized(block.commands, serverUrl, receiverPort))
      .join('\n');
    const child = spawn('bash', ['-c', `set -e\n${script}`], {
      cwd: root,
      env: shellEnv,
      detached: true, // stopped as a group if it outlives its time limit
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    tour = keepOutput('the tour', child, true);
    tourExitCode = await within('the tour', tour.closed, 240_000, tour.output);
  });

  afterAll(async () => {
    if (tour) await stop(tour);
    for (const started of background.reverse()) await stop(started);
    if (server) await stop(server);
    await database?.drop();
    rmSync(workDir, { recursive: true, force: true });
  });

  const api = <T>(pathAndQuery: string) =>
    sendRequest<T>(serverUrl, 'GET', `/api/v1/dev${pathAndQuery}`, { key: shellEnv.KEY! });

  async function tourIntent(): Promise<ApiIntent> {
    const answer = await api<Page<ApiIntent>>('/intents');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.data.items.length, 1, 'the tour made one intent');
    return answer.body.data.items[0]!;
  }

  test('every command of the tour runs, and it prints the statuses the text announces', () => {
    assert.equal(tourExitCode, 0, tour.output());
    const lines = tour.output().split('\n');
    const paid = lines.indexOf('PAID');
    assert.ok(paid >= 0 && lines.indexOf('REFUNDED') > paid, tour.output());
  });

  test('the intent was paid, then refunded in part', async () => {
    const intent = await tourIntent();
    assert.equal(intent.status, 'REFUNDED');
    assert.equal(intent.payment?.amountPaid, intent.amount);
    assert.ok(intent.totalAmountRefunded > 0 && intent.totalAmountRefunded < intent.amount, JSON.stringify(intent));
    const events = await api<Page<ApiEvent>>('/events?limit=100');
    const statuses = events.body.data.items
      .filter((event) => event.object === intent.referenceNumber)
      .sort((a, b) => a.sequence - b.sequence)
      .map((event) => `${event.type} ${event.payload.data.status}`);
    assert.deepEqual(statuses, ['payment.created PENDING', 'payment.confirmed PAID', 'payment.refunded REFUNDED']);
  });

  test('the receiver verified payment.confirmed and payment.refunded, forwarded by commerce listen', async () => {
    const { referenceNumber } = await tourIntent();
    const events = (await api<Page<ApiEvent>>('/events?limit=100')).body.data.items.filter(
      (event) => event.object === referenceNumber,
    );
    const expected = ['payment.confirmed', 'payment.refunded'].map((type) => {
      const event = events.find((candidate) => candidate.type === type);
      assert.ok(event, `a ${type} event of ${referenceNumber}`);
      return `${event.id} ${type}`;
    });
    const receiver = background.find((started) => /^listening on /m.test(started.output()));
    assert.ok(receiver, 'a background block is the receiver');
    // It prints an event only once verified; deliveries come through listen's long poll, a moment later.
    await poll(expected.join(' and '), receiver, () =>
      expected.every((line) => receiver.output().split('\n').includes(line)) ? true : undefined,
    );
  });

  test('the dashboard user the tour created signs in at the page it names and sees the payment', async () => {
    const section = tourSection();
    assert.ok(section.includes(`<${README_SERVER}/dashboard/login>`), 'the tour names the sign-in page');
    const credentials = /user create .*--email (\S+) --password '([^']+)'/.exec(section);
    assert.ok(credentials, 'the tour creates a dashboard user');
    const client = new FormClient({ baseUrl: serverUrl });
    const signedIn = await client.signIn(credentials[1]!, credentials[2]!);
    assert.equal(signedIn.status, 303, signedIn.html.slice(0, 500));
    const payments = await client.get('/dashboard/payments');
    assert.equal(payments.status, 200);
    assert.ok(payments.html.includes((await tourIntent()).referenceNumber), 'the payment is listed');
  });
});
