import {
  ConfigurationError,
  ConnectionError,
  errorFromResponse,
  type CommerceError,
  type ErrorCode,
} from './errors.js';

export interface CommerceOptions {
  /** The server's origin, e.g. `http://localhost:8080`. */
  baseUrl?: string;
  /** Per attempt. Default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt, on connection errors, 409 IDEMPOTENCY_KEY_IN_PROGRESS, 429 and 5xx. Default 2. */
  maxRetries?: number;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** The X-Idempotency-Key of a write; one is made when absent, and kept across that call's retries. */
  idempotencyKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  signal?: AbortSignal;
}

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, unknown> | undefined;
  body?: unknown;
  /** A multipart form (uploads): sent as is. */
  form?: FormData;
  /** Answer as text (CSV export). */
  text?: boolean;
}

const API_BASE = '/api/v1/dev';
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function abortedError(cause: unknown): ConnectionError {
  return new ConnectionError({ code: 'ABORTED', message: 'The request was aborted by its signal.', cause });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(abortedError(signal.reason));
      },
      { once: true },
    );
  });
}

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The transport: one call, its retries, its idempotency key, its errors. */
export class HttpClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly apiKey: string,
    options: CommerceOptions = {},
  ) {
    if (typeof apiKey !== 'string' || !/^(sk|pk)_(test|live)_/.test(apiKey)) {
      throw new ConfigurationError({
        code: 'INVALID_API_KEY_FORMAT',
        message: 'new Commerce(apiKey): the key must start with sk_test_, sk_live_, pk_test_ or pk_live_.',
      });
    }
    this.baseUrl = (options.baseUrl ?? 'http://localhost:8080').replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Exponential backoff with full jitter, 0.5 s doubling up to 8 s; Retry-After wins when given. */
  private delayMs(attempt: number, error: CommerceError): number {
    if (error.retryAfterSeconds !== undefined) return Math.min(error.retryAfterSeconds, 60) * 1000;
    const cap = Math.min(8000, 500 * 2 ** attempt);
    return cap / 2 + Math.random() * (cap / 2);
  }

  private static retryable(error: CommerceError): boolean {
    if (error instanceof ConnectionError) return error.code !== 'ABORTED';
    const status = error.statusCode ?? 0;
    return status === 429 || status >= 500 || (status === 409 && error.code === 'IDEMPOTENCY_KEY_IN_PROGRESS');
  }

  async request<T>(request: ApiRequest, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: 'application/json' };
    if (WRITES.has(request.method)) headers['x-idempotency-key'] = options.idempotencyKey ?? crypto.randomUUID();
    let body: string | FormData | undefined;
    if (request.form) body = request.form;
    else if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    const url = `${this.baseUrl}${API_BASE}${request.path}${queryString(request.query)}`;
    const maxRetries = options.maxRetries ?? this.maxRetries;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt<T>(url, request, headers, body, options);
      } catch (error) {
        const failure = error as CommerceError;
        if (attempt >= maxRetries || !HttpClient.retryable(failure) || options.signal?.aborted) throw failure;
        await sleep(this.delayMs(attempt, failure), options.signal);
      }
    }
  }

  private async attempt<T>(
    url: string,
    request: ApiRequest,
    headers: Record<string, string>,
    body: string | FormData | undefined,
    options: RequestOptions,
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(url, {
        method: request.method,
        headers,
        signal: AbortSignal.any(signals),
        ...(body !== undefined ? { body } : {}),
      });
      text = await response.text();
    } catch (cause) {
      if (options.signal?.aborted) throw abortedError(cause);
      const timedOut = (cause as Error).name === 'TimeoutError';
      throw new ConnectionError({
        code: timedOut ? 'TIMEOUT' : 'CONNECTION_ERROR',
        message: timedOut
          ? `No answer from ${this.baseUrl} within ${timeoutMs} ms.`
          : `Could not reach ${this.baseUrl}: ${(cause as Error).message}`,
        cause,
      });
    }
    const requestId = response.headers.get('x-request-id') ?? undefined;
    if (response.ok && request.text) return text as T;
    let parsed: { success?: boolean; data?: unknown; error?: { code: string; message: string; details?: [] } };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      parsed = {};
    }
    if (response.ok && parsed.success === true) return parsed.data as T;
    const retryAfter = response.headers.get('retry-after');
    throw errorFromResponse({
      code: (parsed.error?.code as ErrorCode | undefined) ?? 'UNEXPECTED_RESPONSE',
      message: parsed.error?.message ?? `HTTP ${response.status} without the API's error envelope.`,
      statusCode: response.status,
      requestId,
      details: parsed.error?.details,
      retryAfterSeconds: retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined,
    });
  }
}

export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
  hasMore: boolean;
}

/**
 * A list call: `await` it for one page, or iterate it with `for await` for every item of every
 * page from there on.
 */
export class PageList<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  private first: Promise<Page<T>> | undefined;

  constructor(
    private readonly fetchPage: (page: number) => Promise<Page<T>>,
    private readonly startPage = 1,
  ) {}

  private firstPage(): Promise<Page<T>> {
    this.first ??= this.fetchPage(this.startPage);
    return this.first;
  }

  then<A = Page<T>, B = never>(
    onFulfilled?: ((value: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.firstPage();
    let number = this.startPage;
    for (;;) {
      yield* page.items;
      if (!page.hasMore || page.items.length === 0) return;
      number += 1;
      page = await this.fetchPage(number);
    }
  }

  /** Every item, in one array (at most `limit` items, 10 000 by default). */
  async toArray(limit = 10_000): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}
