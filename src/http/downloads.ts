import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Caller } from './context.js';
import { ApiError } from './errors.js';

/**
 * Streamed downloads (the balance export, statement files, the products export) held to what a
 * client actually takes (decision 068):
 * - the next batch is read from the database only once the socket took the last one (no read
 *   ahead), so a client that stops reading holds one batch of a few hundred rows, not the file;
 * - a download whose socket took nothing for `stallMs` is ended (the socket destroyed);
 * - each business may have `perBusiness` downloads running at once per environment in a process:
 *   one more answers 429 TOO_MANY_DOWNLOADS with Retry-After, before any work.
 */
export interface DownloadLimits {
  stallMs: number;
  perBusiness: number;
}

/** Seconds a refused download is told to wait: a running one ends, or stalls out, by then or soon after. */
export const DOWNLOAD_RETRY_AFTER_SECONDS = 10;

/** Downloads running in this process, by business and environment. */
const running = new Map<string, number>();

function slotKey(caller: Caller): string {
  return `${caller.businessId}:${caller.environment}`;
}

/** How many downloads the caller has running in this process now. */
export function runningDownloads(caller: Caller): number {
  return running.get(slotKey(caller)) ?? 0;
}

/** Takes one of the caller's download slots, or refuses; the returned function gives it back (once). */
function claimSlot(caller: Caller, limits: DownloadLimits): () => void {
  const key = slotKey(caller);
  const count = running.get(key) ?? 0;
  if (count >= limits.perBusiness) {
    throw new ApiError(
      'TOO_MANY_DOWNLOADS',
      `This business already has ${count} downloads running in this environment; at most ${limits.perBusiness} at once. Retry after the time given.`,
      undefined,
      { 'Retry-After': String(DOWNLOAD_RETRY_AFTER_SECONDS) },
    );
  }
  running.set(key, count + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (running.get(key) ?? 1) - 1;
    if (left > 0) running.set(key, left);
    else running.delete(key);
  };
}

class DownloadStalled extends Error {
  constructor(stallMs: number) {
    super(`the client took nothing for ${stallMs} ms: download ended`);
  }
}

class DownloadClosed extends Error {}

/**
 * Resolves once the response can take more (at once when it can), rejects when it took nothing
 * for `stallMs` or was closed meanwhile.
 */
function drained(response: ServerResponse, stallMs: number): Promise<void> {
  if (response.destroyed) return Promise.reject(new DownloadClosed());
  if (!response.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      response.off('drain', onDrain);
      response.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => settle();
    const onClose = () => settle(new DownloadClosed());
    const timer = setTimeout(() => settle(new DownloadStalled(stallMs)), stallMs);
    response.on('drain', onDrain);
    response.on('close', onClose);
  });
}

/** The chunks, each asked for only once the response took the one before. */
async function* paced(response: ServerResponse, chunks: AsyncIterable<string>, stallMs: number) {
  const iterator = chunks[Symbol.asyncIterator]();
  try {
    for (;;) {
      await drained(response, stallMs);
      const next = await iterator.next();
      if (next.done) break;
      yield next.value;
    }
    // The last chunk in the kernel's hands before the end: what stays is the socket's, not ours.
    await drained(response, stallMs);
  } catch (error) {
    if (error instanceof DownloadClosed) return;
    throw error;
  } finally {
    await iterator.return?.();
  }
}

/** What a download sends: its headers, and its text in chunks read as the client takes them. */
export interface DownloadFile {
  headers: Record<string, string>;
  chunks: AsyncIterable<string>;
}

/**
 * A download for `caller`, answered on `response`: claims a slot (or throws TOO_MANY_DOWNLOADS),
 * then `open` prepares the file (its errors answer as usual, the slot given back); the route
 * sends the headers and the body returned. The slot is given back when the response closes.
 */
export async function startDownload(
  caller: Caller,
  response: ServerResponse,
  limits: DownloadLimits,
  open: () => Promise<DownloadFile> | DownloadFile,
): Promise<{ headers: Record<string, string>; body: Readable }> {
  const release = claimSlot(caller, limits);
  let file: DownloadFile;
  try {
    file = await open();
  } catch (error) {
    release();
    throw error;
  }
  response.once('close', release);
  // After the last byte, the end itself must reach the kernel in time too, or the socket goes.
  response.once('prefinish', () => {
    const timer = setTimeout(() => response.destroy(), limits.stallMs);
    response.once('close', () => clearTimeout(timer));
    response.once('finish', () => clearTimeout(timer));
  });
  // A stall destroys the stream; Fastify then destroys the response (its headers are sent).
  return {
    headers: file.headers,
    body: Readable.from(paced(response, file.chunks, limits.stallMs), { objectMode: false }),
  };
}

/** What the docs of every download (exports, statement files) say of its limits. */
export const DOWNLOAD_LIMITS_DESCRIPTION =
  'A download whose client reads nothing for 30 s (DOWNLOAD_STALL_SECONDS) is ended; a business may have 4 downloads running at once per environment (DOWNLOADS_PER_BUSINESS), one more answers 429 TOO_MANY_DOWNLOADS with Retry-After.';
