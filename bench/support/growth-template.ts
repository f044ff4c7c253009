import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomInt } from 'node:crypto';
import type pg from 'pg';

/**
 * A receiver for the growth bench: notes when each event first arrived (its body's id), and
 * answers 500 to the first attempt of one delivery in `failEvery`, so some deliveries retry.
 */
export async function startGrowthReceiver(failEvery = 10) {
  const arrivals = new Map<string, number>();
  const failed = new Set<string>();
  let attempts = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      attempts += 1;
      const delivery = String(req.headers['x-commerce-delivery'] ?? '');
      if (failEvery > 0 && attempts % failEvery === 0 && !failed.has(delivery)) {
        failed.add(delivery);
        res.writeHead(500).end();
        return;
      }
      const body = Buffer.concat(chunks).toString();
      const id = body ? (JSON.parse(body) as { id?: string }).id : undefined;
      if (id && !arrivals.has(id)) arrivals.set(id, at);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    setFailEvery: (every: number) => (failEvery = every),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A JSON call to the API with a business's secret key: its status and data. */
export type ApiCall = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; data: Record<string, unknown> }>;

export function apiCaller(apiUrl: string, key: string, tag: string): ApiCall {
  let sent = 0;
  return async (method, path, body) => {
    const response = await fetch(`${apiUrl}/api/v1/dev${path}`, {
      method,
      headers: {
        authorization: key,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(method !== 'GET' ? { 'x-idempotency-key': `growth-${tag}-${sent++}-${Date.now()}` } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as { data?: Record<string, unknown> }) : {};
    return { status: response.status, data: parsed.data ?? {} };
  };
}

async function expectOk(what: string, answer: Promise<{ status: number; data: Record<string, unknown> }>) {
  const { status, data } = await answer;
  if (status >= 300) throw new Error(`${what} answered ${status}: ${JSON.stringify(data).slice(0, 300)}`);
  return data;
}

/** What one template day of a shop holds (TEMPLATE_* in the bench's settings). */
export interface TemplateShape {
  payments: number;
  orders: number;
}

/**
 * One business's day written through the API, as a shop produces it: intents paid by sandbox
 * wallets, one in 20 refunded (every other one partly), two cancelled, orders paid at a shop,
 * one payout; the worker delivers their events (some retried) and folds the ledger.
 */
export async function writeTemplateDay(call: ApiCall, phones: string[], shape: TemplateShape): Promise<void> {
  const paid: string[] = [];
  for (let i = 0; i < shape.payments; i++) {
    const intent = await expectOk('intent create', call('POST', '/intents', { amount: 500 + randomInt(50_000) }));
    const reference = String(intent.referenceNumber);
    await expectOk(
      'pay',
      call('POST', `/intents/${reference}/simulate`, { payerPhone: phones[randomInt(phones.length)] }),
    );
    paid.push(reference);
  }
  for (let i = 0; i * 20 < shape.payments; i++) {
    const reference = paid[i * 20]!;
    await expectOk('refund', call('POST', `/intents/${reference}/refund`, i % 2 === 0 ? { amount: 200 } : {}));
  }
  for (let i = 0; i < 2; i++) {
    const intent = await expectOk('intent create', call('POST', '/intents', { amount: 1000 }));
    await expectOk('cancel', call('POST', `/intents/${String(intent.referenceNumber)}/cancel`));
  }
  const product = await expectOk(
    'product',
    call('POST', '/store/products', { name: 'Tea', price: 1500, status: 'ACTIVE' }),
  );
  for (let i = 0; i < shape.orders; i++) {
    await expectOk(
      'order',
      call('POST', '/store/orders/simulate', {
        items: [{ productId: product.id, quantity: 1 + (i % 3) }],
        customerName: 'Aicha',
      }),
    );
  }
  await expectOk(
    'payout',
    call('POST', '/payouts', { amount: 5000, destination: { type: 'WALLET', phone: phones[0] } }),
  );
}

/** Waits until the worker has ended every delivery and payout and folded every movement. */
export async function waitForQuiet(client: pg.Client, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await client.query<{ busy: string }>(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE status IN ('PENDING', 'FAILED') OR locked_until IS NOT NULL)
        + (SELECT count(*) FROM payouts WHERE status NOT IN ('PAID', 'FAILED', 'CANCELLED'))
        + (SELECT count(*) FROM ledger_pending_movements)
        + (SELECT count(*) FROM balance_transactions WHERE balance_after IS NULL) AS busy`,
    );
    if (Number(rows[0]!.busy) === 0) return;
    if (Date.now() > deadline) throw new Error(`the template did not settle: ${rows[0]!.busy} rows still busy`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
