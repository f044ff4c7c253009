import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export function canonicalJson(value: unknown): string {
  // The same text as the recursive definition (sorted keys, undefined properties left out), built
  // with an explicit stack: a body nested 20,000 deep must not overflow the call stack.
  const out: string[] = [];
  const stack: ({ value: unknown } | string)[] = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const current = item.value;
    if (Array.isArray(current)) {
      stack.push(']');
      for (let i = current.length - 1; i >= 0; i--) {
        stack.push({ value: current[i] });
        if (i > 0) stack.push(',');
      }
      stack.push('[');
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      stack.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        stack.push({ value: v });
        stack.push(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`);
      }
      stack.push('{');
    } else {
      out.push(JSON.stringify(current) ?? 'null');
    }
  }
  return out.join('');
}

/** What makes two requests "the same": method, path with query, and the body (or file bytes). */
export function requestFingerprint(request: FastifyRequest, body: unknown): string {
  const hash = createHash('sha256').update(`${request.method} ${request.url}\n`);
  hash.update(Buffer.isBuffer(body) ? body : canonicalJson(body ?? null));
  return hash.digest('hex');
}

/**
 * The body a key covers: without its secret fields (a PIN or password is never kept beside a key,
 * not even hashed: a 4-digit PIN hashed with an otherwise known body is read back in 10,000
 * tries), and, on a route that has secrets to leave out (every dashboard form: its CSRF token), a
 * file field by its bytes' digest, so a double submit of one upload is one change. A body that is
 * the upload itself (a Buffer) is covered as its bytes.
 */
export function coveredBody(body: unknown, secretFields: readonly string[] | undefined): unknown {
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return body;
  if (!secretFields) return body;
  const covered: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (secretFields.includes(name)) continue;
    covered[name] = Buffer.isBuffer(value) ? `sha256:${createHash('sha256').update(value).digest('hex')}` : value;
  }
  return covered;
}
