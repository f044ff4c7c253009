/**
 * A small merchant integration with the SDK: create an intent, receive and verify its webhooks,
 * pay it (sandbox), refund part of it. With the server of `npm start` running, from the
 * repository's root, with the sandbox secret key its banner prints:
 *   COMMERCE_API_KEY=sk_test_... COMMERCE_BASE_URL=http://localhost:8080 node examples/merchant.mjs
 * No server setting and no public URL: the webhooks reach this script's receiver through the SDK's
 * `listen` (what `commerce listen` does), signed as real deliveries. In production the receiver is
 * the same; only the events come from a webhook endpoint with your public https URL (docs/sdk.md).
 */
/* global AbortController */
import http from 'node:http';
import { Commerce, WebhookVerificationError } from '@commerce-developer-api/sdk';
import { listen, randomSecret } from '@commerce-developer-api/sdk/listen';

export async function runMerchant({ apiKey, baseUrl, log = (line) => process.stdout.write(`${line}\n`) }) {
  const commerce = new Commerce(apiKey, { baseUrl });
  const received = [];
  // The secret the receiver verifies with: listen signs with it, as an endpoint's own secret.
  const secret = randomSecret();
  const lastSequence = new Map();

  // The receiver: verify the raw body, drop stale or duplicate events, answer 2xx fast.
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const event = await commerce.webhooks.verify(Buffer.concat(chunks), req.headers, secret);
        const object = event.event.startsWith('payment.') ? event.data.reference_number : event.id;
        if ((lastSequence.get(object) ?? 0) < event.sequence) {
          lastSequence.set(object, event.sequence);
          received.push(event);
          log(`webhook ${event.event} #${event.sequence}`);
        }
        res.writeHead(200).end();
      } catch (error) {
        res.writeHead(error instanceof WebhookVerificationError ? 401 : 500).end();
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/hooks`;
  // Each step waits for its webhook, as a shop ships only once payment.confirmed has arrived
  // (deliveries of one endpoint run side by side, so two quick changes can arrive swapped).
  const webhook = async (name) => {
    const deadline = Date.now() + 20_000;
    while (!received.some((event) => event.event === name) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!received.some((event) => event.event === name)) throw new Error(`no ${name} webhook within 20 s`);
  };

  // The sandbox's events forwarded to the receiver, from now on, until the example ends.
  const stopListening = new AbortController();
  let ready;
  const isReady = new Promise((resolve) => (ready = resolve));
  const listening = listen({
    apiKey,
    baseUrl,
    forwardTo: url,
    secret,
    events: ['payment.created', 'payment.confirmed', 'payment.refunded'],
    print: (line) => line.startsWith('Ready.') && ready(),
    warn: log,
    signal: stopListening.signal,
  });

  try {
    await Promise.race([isReady, listening]); // a refused key ends the example here, with its error
    const intent = await commerce.intents.create({
      amount: 25_000,
      label: 'Example order',
      metadata: { orderId: 'ex-1' },
    });
    log(`intent ${intent.referenceNumber}: pay at ${intent.payUrl}`);
    await webhook('payment.created');
    await commerce.intents.simulate(intent.referenceNumber, { outcome: 'success' });
    await webhook('payment.confirmed');
    const refunded = await commerce.intents.refund(intent.referenceNumber, {
      amount: 5_000,
      reason: 'one item missing',
    });
    log(`refunded ${refunded.totalAmountRefunded} centimes`);
    await webhook('payment.refunded');
    return { intent: await commerce.intents.retrieve(intent.referenceNumber), events: received };
  } finally {
    stopListening.abort();
    await listening.catch(() => undefined); // its error, if any, was the race's above
    server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runMerchant({ apiKey: process.env.COMMERCE_API_KEY, baseUrl: process.env.COMMERCE_BASE_URL });
}
