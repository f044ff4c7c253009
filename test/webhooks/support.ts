import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { expectStatus, waitUntil, type TestApp } from '../support/harness.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

export const ENDPOINTS = '/api/v1/dev/webhooks/endpoints';
export const DELIVERIES = '/api/v1/dev/webhooks/events';

export interface TestEndpoint {
  id: string;
  secret: string;
  [field: string]: unknown;
}

/** Webhook test helpers bound to one app; receivers opened here are closed by `closeAll`. */
export function webhookHelpers(t: TestApp) {
  const receivers: Receiver[] = [];

  async function createEndpoint(key: string, body: Record<string, unknown>): Promise<TestEndpoint> {
    const response = await t.request('POST', ENDPOINTS, { key, idempotencyKey: true, body });
    expectStatus(response, 201);
    return response.body.data as TestEndpoint;
  }

  async function receiverWithEndpoint(key: string, events: string[], extra: Record<string, unknown> = {}) {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const endpoint = await createEndpoint(key, { url: receiver.url, events, ...extra });
    return { receiver, endpoint };
  }

  async function getDelivery(key: string, id: string) {
    const response = await t.request('GET', `${DELIVERIES}/${id}`, { key });
    expectStatus(response, 200);
    return response.body.data;
  }

  /** Polls the delivery API until `check` holds. */
  async function waitForDelivery(key: string, id: string, check: (delivery: any) => boolean, timeoutMs = 15_000) {
    return waitUntil(
      async () => {
        const delivery = await getDelivery(key, id);
        return check(delivery) ? delivery : undefined;
      },
      `delivery ${id} to settle`,
      timeoutMs,
    );
  }

  /** Polls until `read` returns a value that passes `check`. */
  async function waitFor<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 15_000) {
    return waitUntil(
      async () => {
        const value = await read();
        return check(value) ? { value } : undefined;
      },
      what,
      timeoutMs,
    ).then((found) => found.value);
  }

  /** Sends a ping to the endpoint and answers its delivery id. */
  async function ping(key: string, endpointId: string): Promise<string> {
    const response = await t.request('POST', `${ENDPOINTS}/${endpointId}/test`, { key, idempotencyKey: true });
    expectStatus(response, 200);
    return response.body.data.id as string;
  }

  function deliveriesOfEndpoint(endpointId: string) {
    return t.runtime.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  return {
    createEndpoint,
    receiverWithEndpoint,
    getDelivery,
    waitForDelivery,
    waitFor,
    ping,
    deliveriesOfEndpoint,
    track: (receiver: Receiver) => receivers.push(receiver),
    async closeAll() {
      for (const receiver of receivers) await receiver.close();
    },
  };
}

/** A local port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert(address && typeof address === 'object');
  await new Promise((resolve) => server.close(resolve));
  return address.port;
}
