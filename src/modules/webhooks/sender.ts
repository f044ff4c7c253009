import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { AddressNotAllowedError, guardedLookup, isPublicAddress } from './ssrf.js';

/** How much of a receiver's answer an attempt keeps (body, and response headers as JSON). */
export const RESPONSE_BODY_BYTES = 4096;
const RESPONSE_HEADERS_BYTES = 4096;

/** Why an attempt failed, for the delivery log and the endpoint stats. */
export const errorClasses = [
  'TIMEOUT',
  'CONNECTION_REFUSED',
  'TLS',
  'DNS',
  'NON_2XX',
  'REDIRECT_REFUSED',
  'ADDRESS_REFUSED',
  'CONNECTION_ERROR',
] as const;
export type ErrorClass = (typeof errorClasses)[number];

export interface PostOutcome {
  statusCode: number | null;
  /** null when the receiver answered 2xx. */
  error: string | null;
  errorClass: ErrorClass | null;
  /** Every header of the request as sent (the signature is no secret: it is sent in clear). */
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string> | null;
  /** Up to 4 KB of the answer's body. */
  responseBody: string | null;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL', 'ENONAME']);

/** Network errors by what an operator has to fix. */
export function classifyError(error: Error & { code?: string }): ErrorClass {
  const code = error.code ?? '';
  if (error instanceof AddressNotAllowedError) return 'ADDRESS_REFUSED';
  if (code === 'ECONNREFUSED') return 'CONNECTION_REFUSED';
  if (DNS_CODES.has(code) || /did not resolve/.test(error.message)) return 'DNS';
  if (
    code.startsWith('ERR_SSL_') ||
    code.startsWith('ERR_TLS_') ||
    code.includes('CERT') ||
    code === 'EPROTO' ||
    /\b(SSL|TLS)\b|certificate/i.test(error.message)
  ) {
    return 'TLS';
  }
  return 'CONNECTION_ERROR';
}

function statusError(statusCode: number): { error: string | null; errorClass: ErrorClass | null } {
  if (statusCode >= 200 && statusCode < 300) return { error: null, errorClass: null };
  if (statusCode >= 300 && statusCode < 400) {
    return { error: `HTTP ${statusCode}`, errorClass: 'REDIRECT_REFUSED' };
  }
  return { error: `HTTP ${statusCode}`, errorClass: 'NON_2XX' };
}

/** The answer's headers as one flat object, cut to a bounded size. */
function keptHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  let size = 2;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    size += name.length + text.length + 6;
    if (size > RESPONSE_HEADERS_BYTES) break;
    kept[name] = text;
  }
  return kept;
}

/**
 * Connections are kept open between attempts to the same receiver: a new TCP connection (and TLS
 * handshake) per attempt capped one endpoint at ~700 deliveries/s. A kept connection was checked
 * when it was opened, so the address rule still holds for every byte sent; the pools for sandbox
 * deliveries allowed to reach private addresses (WEBHOOK_ALLOW_PRIVATE) are separate, so a live
 * delivery never reuses a connection opened under that switch. An idle connection is closed after
 * 4 s (sooner when the receiver's Keep-Alive header says so), before a typical server's 5 s, so an
 * attempt rarely lands on a connection the receiver is closing.
 */
const IDLE_CONNECTION_MS = 4000;
const keptOpen = { keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' } as const;
const agents = {
  private: { http: new http.Agent(keptOpen), https: new https.Agent(keptOpen) },
  public: { https: new https.Agent(keptOpen) },
};

export interface PostOptions {
  /** The whole exchange, connection included. */
  timeoutMs: number;
  /**
   * Opening a connection (DNS, TCP, TLS), shorter than `timeoutMs`: an address that drops
   * packets frees its delivery slot in seconds, not at the response's limit.
   */
  connectTimeoutMs: number;
  allowPrivate: boolean;
}

/**
 * One POST to a receiver: no redirects followed (a 3xx is a failed attempt), the resolved
 * address checked when a connection is opened (DNS resolved again for every new connection), a
 * time limit for opening the connection and a hard one for the whole exchange, and at most 4 KB
 * of the answer kept.
 */
export function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: PostOptions,
): Promise<PostOutcome> {
  const requestHeaders = { ...headers, 'Content-Length': String(Buffer.byteLength(body)) };
  const refused = (error: string): Promise<PostOutcome> =>
    Promise.resolve({
      statusCode: null,
      error,
      errorClass: 'ADDRESS_REFUSED',
      requestHeaders,
      responseHeaders: null,
      responseBody: null,
    });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return refused('invalid URL');
  }
  const host = target.hostname.replace(/^\[|\]$/g, '');
  // A literal address never goes through `lookup`, so it is checked here.
  if (isIP(host) && !options.allowPrivate && !isPublicAddress(host)) {
    return refused(`${host} is not a public address`);
  }
  const pool = options.allowPrivate ? agents.private : agents.public;
  const [transport, agent] =
    target.protocol === 'https:'
      ? [https, pool.https]
      : target.protocol === 'http:' && options.allowPrivate
        ? [http, agents.private.http]
        : [undefined, undefined];
  if (!transport) return refused('the URL must use https');

  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    let connectTimer: NodeJS.Timeout | undefined;
    let statusCode: number | null = null;
    let responseHeaders: Record<string, string> | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (failure: (Error & { code?: string }) | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(connectTimer);
      if (statusCode !== null) {
        resolve({
          statusCode,
          ...statusError(statusCode),
          requestHeaders,
          responseHeaders,
          responseBody: Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES).toString('utf8'),
        });
        return;
      }
      resolve({
        statusCode: null,
        error: failure?.message ?? 'the connection closed without an answer',
        errorClass: timedOut ? 'TIMEOUT' : failure ? classifyError(failure) : 'CONNECTION_ERROR',
        requestHeaders,
        responseHeaders: null,
        responseBody: null,
      });
    };
    const request = transport.request(
      target,
      {
        method: 'POST',
        headers: requestHeaders,
        lookup: guardedLookup(options.allowPrivate) as never,
        agent,
      },
      (response) => {
        statusCode = response.statusCode ?? null;
        responseHeaders = keptHeaders(response.headers);
        response.on('data', (chunk: Buffer) => {
          if (size < RESPONSE_BODY_BYTES) chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_BODY_BYTES) response.destroy();
        });
        response.on('close', () => finish(null));
        response.on('error', () => finish(null));
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error(`no answer within ${seconds(options.timeoutMs)} s`));
    }, options.timeoutMs);
    request.on('socket', (socket) => {
      // A kept connection is open already; a new one must be ready (TLS included) in time.
      if (!socket.connecting) return;
      connectTimer = setTimeout(() => {
        timedOut = true;
        request.destroy(new Error(`could not connect within ${seconds(options.connectTimeoutMs)} s`));
      }, options.connectTimeoutMs);
      socket.once(transport === https ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    request.on('error', (error) => finish(error));
    request.end(body);
  });
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}
