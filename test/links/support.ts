import { expectStatus, type TestApp } from '../support/harness.js';

/** A link of the business's, created through the API. */
export async function createLink(t: TestApp, key: string, body: Record<string, unknown>) {
  const response = await t.request('POST', '/api/v1/dev/payment-links', { key, body, idempotencyKey: true });
  expectStatus(response, 201);
  return response.body.data;
}

/** The slug of a link's `url`. */
export function slugOf(link: { url: string }): string {
  return link.url.split('/l/')[1]!;
}

/** A payer pays a link through the page's API (a fresh idempotency key per attempt, as the page sends). */
export function payLink(t: TestApp, link: { url: string }, body: Record<string, unknown>) {
  return t.request('POST', `/checkout/links/${slugOf(link)}/pay`, { body, idempotencyKey: true });
}
