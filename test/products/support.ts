import type { TestApp, TestResponse } from '../support/harness.js';
import { expectStatus } from '../support/harness.js';

export const PRODUCTS = '/api/v1/dev/store/products';

export async function createProduct(t: TestApp, key: string, body: Record<string, unknown>): Promise<any> {
  const response = await t.request('POST', PRODUCTS, { key, body, idempotencyKey: true });
  expectStatus(response, 201);
  return response.body.data;
}

export function write(t: TestApp, key: string, method: string, path: string, body?: unknown): Promise<TestResponse> {
  return t.request(method, `${PRODUCTS}${path}`, {
    key,
    idempotencyKey: true,
    ...(body !== undefined ? { body } : {}),
  });
}

/** A product's stock as GET answers it: its quantity and its variants' (null when not tracked). */
export async function stockOf(
  t: TestApp,
  key: string,
  id: string,
): Promise<{ quantity: number | null; variants: { quantity: number | null }[] }> {
  const response = await t.request('GET', `${PRODUCTS}/${id}`, { key });
  expectStatus(response, 200);
  const { quantity, variants } = response.body.data;
  return { quantity, variants };
}
