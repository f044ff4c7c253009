import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isPublicAddress } from './ssrf.js';

export const RESPONSE_SNIPPET_BYTES = 1024;

export interface PostOutcome {
  statusCode: number | null;
  error: string | null;
  responseSnippet: string | null;
}

/**
 * One POST to a receiver: no redirects followed (a 3xx is just a non-2xx answer), the resolved
 * address checked at connect time (DNS re-checked at every attempt), a hard time limit for the
 * whole exchange, and at most 1 KB of the answer kept.
 */
export function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; allowPrivate: boolean },
): Promise<PostOutcome> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ statusCode: null, error: 'invalid URL', responseSnippet: null });
  }
  const host = target.hostname.replace(/^\[|\]$/g, '');
  // A literal address never goes through `lookup`, so it is checked here.
  if (isIP(host) && !options.allowPrivate && !isPublicAddress(host)) {
    return Promise.resolve({ statusCode: null, error: `${host} is not a public address`, responseSnippet: null });
  }
  const transport =
    target.protocol === 'https:' ? https : target.protocol === 'http:' && options.allowPrivate ? http : undefined;
  if (!transport) return Promise.resolve({ statusCode: null, error: 'the URL must use https', responseSnippet: null });

  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const snippet = Buffer.concat(chunks).subarray(0, RESPONSE_SNIPPET_BYTES).toString('utf8');
      resolve({
        statusCode,
        error: statusCode === null ? error : null,
        responseSnippet: statusCode === null ? null : snippet,
      });
    };
    const request = transport.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(options.allowPrivate) as never,
        agent: false,
      },
      (response) => {
        statusCode = response.statusCode ?? null;
        response.on('data', (chunk: Buffer) => {
          if (size < RESPONSE_SNIPPET_BYTES) chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_SNIPPET_BYTES) response.destroy();
        });
        response.on('close', () => finish(null));
        response.on('error', () => finish(null));
      },
    );
    const timer = setTimeout(() => {
      request.destroy(new Error(`no answer within ${Math.round(options.timeoutMs / 100) / 10} s`));
    }, options.timeoutMs);
    request.on('error', (error) => finish(error.message));
    request.end(body);
  });
}
