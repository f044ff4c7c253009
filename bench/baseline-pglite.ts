/**
 * The embedded baseline: a bare Fastify server on its own PGlite data directory (the same
 * migrations), doing what an intent create and get do in the database the plain way: a BEGIN /
 * 3 inserts / COMMIT create and a select by reference, with no auth, validation, idempotency
 * claim or serialization schema.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { openDatabase } from '../src/db/connect.js';
import { migrate } from '../src/db/migrate.js';
import { randomBase62, randomDigits } from '../src/lib/ids.js';

const database = await openDatabase({ kind: 'pglite', dataDir: process.env.DATA_DIR ?? './data/bench-bare' });
await migrate(database);
const pglite = database.pglite!;
const businessId = `biz_bare_${randomBase62(8)}`;
await pglite.query(`INSERT INTO businesses (id, name) VALUES ($1, 'Bare')`, [businessId]);
const app = Fastify();

app.get('/ready', async () => ({ ok: true }));

app.post<{ Body: { amount: number; label?: string; metadata?: Record<string, string> } }>(
  '/bare/intents',
  async (request, reply) => {
    const now = new Date();
    const reference = `PI-${randomDigits(16)}`;
    const body = JSON.stringify({ success: true, data: { referenceNumber: reference, amount: request.body.amount } });
    await pglite.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO payment_intents (reference_number, short_code, business_id, environment, amount_type, amount,
         label, metadata, status, expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, 'live', 'FIXED', $4, $5, $6, 'PENDING', $7, $8, $8)`,
        [
          reference,
          randomBase62(6),
          businessId,
          request.body.amount,
          request.body.label ?? '',
          JSON.stringify(request.body.metadata ?? {}),
          new Date(now.getTime() + 86_400_000),
          now,
        ],
      );
      await tx.query(
        // Numbered within its object, as the app's outbox does (migration 013).
        `WITH numbered AS (
           INSERT INTO event_sequences (business_id, environment, subject, last_sequence) VALUES ($2, 'live', $3, 1)
           ON CONFLICT (business_id, environment, subject) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
           RETURNING last_sequence)
         INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
         SELECT $1, $2, 'live', 'payment.created', $3, $4, $5, last_sequence FROM numbered`,
        [
          `evt_${randomBase62(24)}`,
          businessId,
          reference,
          JSON.stringify({ event: 'payment.created', reference }),
          now,
        ],
      );
      await tx.query(
        `INSERT INTO idempotency_keys (business_id, environment, idempotency_key, fingerprint, state, response_status, response_body)
         VALUES ($1, 'live', $2, 'f', 'done', 201, $3)`,
        [businessId, randomUUID(), body],
      );
    });
    return reply.code(201).type('application/json').send(body);
  },
);

app.get<{ Params: { reference: string } }>('/bare/intents/:reference', async (request, reply) => {
  const { rows } = await pglite.query('SELECT * FROM payment_intents WHERE reference_number = $1', [
    request.params.reference,
  ]);
  if (!rows[0]) return reply.code(404).send({ success: false });
  return { success: true, data: rows[0] };
});

app.get('/bare/references', async () => {
  const { rows } = await pglite.query<{ reference_number: string }>(
    'SELECT reference_number FROM payment_intents LIMIT 5000',
  );
  return rows.map((row) => row.reference_number);
});

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => database.close())
    .then(() => process.exit(0));
});
