import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { STREAM_CAPS } from '../../src/modules/walletapp/stream-hub.js';
import { testDatabaseKind } from '../support/database.js';
import { expectStatus, startTestApp, waitUntil, type TestApp } from '../support/harness.js';
import { Browser, PAYER, requestPayment } from './support.js';

const PG_ONLY = testDatabaseKind === 'postgres' ? false : 'PostgreSQL only: another app on its own connections';

/** An open `GET /wallet/events`, read as it comes. */
interface OpenStream {
  status: number;
  headers: Headers;
  /** Waits for an event whose text includes `needle`; the milliseconds it took. */
  until(needle: string, timeoutMs?: number): Promise<number>;
  /** Resolves when the server ends the stream. */
  ended(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function openStream(t: TestApp, browser: Browser): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${t.baseUrl}/wallet/events`, {
    headers: { cookie: browser.cookieHeader() },
    signal: controller.signal,
  });
  let text = '';
  let done = false;
  const reader = response.status === 200 ? response.body!.getReader() : undefined;
  if (!reader) await response.text();
  const decoder = new TextDecoder();
  let pending: Promise<void> | undefined;
  const readMore = () =>
    (pending ??= reader!
      .read()
      .then(({ value, done: finished }) => {
        if (finished) done = true;
        else text += decoder.decode(value);
      })
      .catch(() => {
        done = true;
      })
      .finally(() => (pending = undefined)));
  const waitFor = async (ok: () => boolean, what: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!ok()) {
      const left = deadline - Date.now();
      assert.ok(left > 0 && !done, `${what} within ${timeoutMs} ms (got ${JSON.stringify(text)})`);
      await Promise.race([readMore(), new Promise((resolve) => setTimeout(resolve, left))]);
    }
  };
  return {
    status: response.status,
    headers: response.headers,
    async until(needle, timeoutMs = 5000) {
      const started = Date.now();
      await waitFor(() => text.includes(needle), `an event with ${needle}`, timeoutMs);
      return Date.now() - started;
    },
    async ended(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!done) {
        assert.ok(Date.now() < deadline, `the stream ended within ${timeoutMs} ms`);
        await Promise.race([readMore(), new Promise((resolve) => setTimeout(resolve, 100))]);
      }
    },
    async close() {
      controller.abort();
      await pending;
    },
  };
}

describe('the wallet app live stream (issue 51): pushed at commit, capped, never keeps a session alive', () => {
  let t: TestApp;
  /** A business of its own per test: a phone takes at most 3 pending requests from one business. */
  const merchant = async () => (await t.createBusiness({ name: 'Boutique Ksar' })).keys.secretTest;

  beforeAll(async () => {
    // The slow poll stays at its 5 s: an event within a second is the notification's doing.
    t = await startTestApp({
      config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' },
      configOverrides: { walletStream: { pollMs: 5000, sessionCheckMs: 200 } },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('a new request reaches an open stream at once, not at the next poll', async () => {
    const sk = await merchant();
    const browser = new Browser(t);
    await browser.signIn();
    const stream = await openStream(t, browser);
    try {
      assert.equal(stream.status, 200);
      for (let i = 0; i < 2; i++) {
        const request = await requestPayment(t, sk);
        const took = await stream.until(request.id, 1000);
        assert.ok(took < 1000, `${took} ms`);
      }
    } finally {
      await stream.close();
    }
  });

  test('another wallet’s request wakes nobody else', async () => {
    const sk = await merchant();
    const phone = '+22220000041';
    expectStatus(await t.admin('POST', '/wallets', { phone, pin: '4321', environment: 'test', balance: 1000 }), 201);
    const other = new Browser(t);
    await other.signIn(phone.slice(4), '4321');
    const payer = new Browser(t);
    await payer.signIn();
    const [theirs, mine] = [await openStream(t, other), await openStream(t, payer)];
    try {
      const request = await requestPayment(t, sk, { phone });
      await theirs.until(request.id, 1000);
      const next = await requestPayment(t, sk);
      await mine.until(next.id, 1000);
      await assert.rejects(theirs.until(next.id, 300), /within 300 ms/);
    } finally {
      await Promise.all([theirs.close(), mine.close()]);
    }
  });

  test.skipIf(PG_ONLY)(
    'a request made through another app instance (its own connections) reaches the stream',
    async () => {
      const sk = await merchant();
      const database = await openDatabase({ kind: 'postgres', url: t.testDatabase.url!, poolSize: 2 });
      const second = await startTestApp({
        config: { RATE_LIMIT_TEST_PER_MINUTE: '100000' },
        // Its runtime closes this database; the test database itself stays for the first app.
        testDatabase: { database, url: t.testDatabase.url, drop: async () => {} },
      });
      const browser = new Browser(t);
      await browser.signIn();
      const stream = await openStream(t, browser);
      try {
        const request = await requestPayment(second, sk);
        const took = await stream.until(request.id, 1000);
        assert.ok(took < 1000, `${took} ms`);
      } finally {
        await stream.close();
        await second.close();
      }
    },
  );

  test(`a session holds at most ${STREAM_CAPS.perSession} streams: the next is refused with a plain 429`, async () => {
    const sk = await merchant();
    const browser = new Browser(t);
    await browser.signIn();
    const open: OpenStream[] = [];
    try {
      for (let i = 0; i < STREAM_CAPS.perSession; i++) open.push(await openStream(t, browser));
      assert.deepEqual(
        open.map((stream) => stream.status),
        Array<number>(STREAM_CAPS.perSession).fill(200),
      );
      const refused = await openStream(t, browser);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('cache-control'), 'no-store');
      assert.match(refused.headers.get('content-type') ?? '', /^text\/plain/);
      // The streams still open are not touched by the refusal.
      const request = await requestPayment(t, sk);
      for (const stream of open) await stream.until(request.id, 1000);
      // A closed tab frees its place.
      await open.shift()!.close();
      const again = await waitUntil(async () => {
        const stream = await openStream(t, browser);
        if (stream.status === 200) return stream;
        return false;
      }, 'a place freed by a closed stream');
      open.push(again);
    } finally {
      await Promise.all(open.map((stream) => stream.close()));
    }
  });

  test(`one client address holds at most ${STREAM_CAPS.perAddress} streams`, async () => {
    const open: OpenStream[] = [];
    try {
      const sessions = Math.ceil(STREAM_CAPS.perAddress / STREAM_CAPS.perSession);
      for (let s = 0; s < sessions; s++) {
        const browser = new Browser(t);
        await browser.signIn();
        for (let i = 0; i < STREAM_CAPS.perSession && open.length < STREAM_CAPS.perAddress; i++) {
          const stream = await openStream(t, browser);
          assert.equal(stream.status, 200);
          open.push(stream);
        }
      }
      const browser = new Browser(t);
      await browser.signIn();
      const refused = await openStream(t, browser);
      assert.equal(refused.status, 429, 'a fresh session, but the address is full');
    } finally {
      await Promise.all(open.map((stream) => stream.close()));
    }
  });

  test('an open stream does not keep its session alive: idle 30 minutes, the session and the stream end', async () => {
    const browser = new Browser(t);
    await browser.signIn();
    const stream = await openStream(t, browser);
    const { db } = t.runtime;
    const lastSeen = async () =>
      (
        await sql<{ seen: Date }>`SELECT max(last_seen_at) AS seen FROM wallet_sessions
          WHERE wallet_id = (SELECT id FROM wallets WHERE phone = ${PAYER.phone} AND environment = 'test')`.execute(db)
      ).rows[0]!.seen;
    try {
      // Ten minutes idle: a page view would touch it now; the stream's checks (every 200 ms here) must not.
      await sql`UPDATE wallet_sessions SET last_seen_at = now() - interval '10 minutes'`.execute(db);
      const before = new Date(await lastSeen()).getTime();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(new Date(await lastSeen()).getTime(), before, 'the stream did not touch the session');
      await sql`UPDATE wallet_sessions SET last_seen_at = now() - interval '31 minutes'`.execute(db);
      await stream.ended(3000);
      const after = await openStream(t, browser);
      assert.equal(after.status, 401);
      const page = await browser.get('/wallet');
      assert.doesNotMatch(page.html, /id="balance"/, 'signed out');
    } finally {
      await stream.close();
    }
  });
});
