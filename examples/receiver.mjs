/**
 * A webhook receiver: verifies each delivery with the SDK and prints one line per event.
 *   WEBHOOK_SECRET=$(npx commerce listen --api-key $KEY --print-secret) PORT=3000 node examples/receiver.mjs
 * WEBHOOK_SECRET is an endpoint's secret, or the listen secret behind `commerce listen`.
 */
import http from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@commerce-developer-api/sdk/webhooks'; // no client, no API key

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  process.stderr.write(
    'Set WEBHOOK_SECRET: the endpoint secret, or `npx commerce listen --api-key $KEY --print-secret`.\n',
  );
  process.exit(1);
}
const port = Number(process.env.PORT ?? 3000);

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        // Verify the raw bytes, never re-serialized JSON; timestamps older than 300 s are refused.
        const event = await verifyWebhook(Buffer.concat(chunks), req.headers, secret);
        process.stdout.write(`${event.id} ${event.event}\n`);
        // Deduplicate on event.id; drop an event whose sequence is below one already handled for
        // its object. Answer fast: anything but a 2xx within 30 s is retried.
        res.writeHead(200).end();
      } catch (error) {
        process.stderr.write(`${error.code} ${error.message}\n`); // e.g. NO_MATCHING_SIGNATURE, TIMESTAMP_OUTSIDE_TOLERANCE
        res.writeHead(error instanceof WebhookVerificationError ? 401 : 500).end();
      }
    });
  })
  .listen(port, () => process.stdout.write(`listening on http://localhost:${port}\n`));
