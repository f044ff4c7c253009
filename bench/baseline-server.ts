/**
 * The same-run baseline: a bare Fastify server doing what an intent create and get do in the
 * database, the plain way (pg, unnamed queries, a BEGIN / 3 inserts / COMMIT transaction), with
 * no auth, validation, idempotency claim or serialization schema.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { parse } from 'csv-parse/sync';
import pg from 'pg';
import { randomBase62, randomDigits } from '../src/lib/ids.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 20) });
const businessId = process.env.BENCH_BUSINESS_ID ?? '';
const app = Fastify();
/** The event's number within its object, as the app's outbox takes it (migration 013). */
const NEXT_SEQUENCE = `INSERT INTO event_sequences (business_id, environment, subject, last_sequence)
  VALUES ($2, 'live', $3, 1)
  ON CONFLICT (business_id, environment, subject) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
  RETURNING last_sequence`;

app.get('/ready', async () => ({ ok: true }));

app.post<{ Body: { amount: number; label?: string; metadata?: Record<string, string> } }>(
  '/bare/intents',
  async (request, reply) => {
    const now = new Date();
    const reference = `PI-${randomDigits(16)}`;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
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
      const event = JSON.stringify({ event: 'payment.created', reference });
      await client.query(
        `WITH numbered AS (${NEXT_SEQUENCE})
         INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
         SELECT $1, $2, 'live', 'payment.created', $3, $4, $5, last_sequence FROM numbered`,
        [`evt_${randomBase62(24)}`, businessId, reference, event, now],
      );
      const body = JSON.stringify({ success: true, data: { referenceNumber: reference, amount: request.body.amount } });
      await client.query(
        `INSERT INTO idempotency_keys (business_id, environment, idempotency_key, fingerprint, state, response_status, response_body)
       VALUES ($1, 'live', $2, 'f', 'done', 201, $3)`,
        [businessId, randomUUID(), body],
      );
      await client.query('COMMIT');
      return reply.code(201).type('application/json').send(body);
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  },
);

// A payment the plain way: the same double-entry transfer, with the payer's and the merchant's
// balances locked for the transaction (what a simple ledger does), no fees, checks or schemas.
app.post<{ Params: { reference: string }; Querystring: { payer: string } }>(
  '/bare/pay/:reference',
  async (request, reply) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const intent = await client.query(
        `SELECT id, business_id, amount FROM payment_intents WHERE reference_number = $1 FOR UPDATE`,
        [request.params.reference],
      );
      const { id, business_id: business, amount } = intent.rows[0];
      const payer = await client.query('SELECT id, balance FROM ledger_accounts WHERE id = $1 FOR UPDATE', [
        request.query.payer,
      ]);
      const merchant = await client.query(
        `SELECT id FROM ledger_accounts WHERE environment = 'test' AND kind = 'merchant' AND owner_id = $1 FOR UPDATE`,
        [business],
      );
      if (Number(payer.rows[0].balance) < Number(amount)) throw new Error('insufficient balance');
      const transaction = `ltx_${randomBase62(20)}`;
      const reference = request.params.reference;
      await client.query(
        `INSERT INTO ledger_postings (transaction_id, account_id, amount, kind, reference, created_at)
         VALUES ($1, $2, $3, 'payment', $5, now()), ($1, $4, -$3::bigint, 'payment', $5, now())`,
        [transaction, merchant.rows[0].id, amount, payer.rows[0].id, reference],
      );
      await client.query('UPDATE ledger_accounts SET balance = balance - $2 WHERE id = $1', [payer.rows[0].id, amount]);
      await client.query('UPDATE ledger_accounts SET balance = balance + $2 WHERE id = $1', [
        merchant.rows[0].id,
        amount,
      ]);
      await client.query(
        `UPDATE payment_intents SET status = 'PAID', payment_code = NULL, amount_paid = $2, paid_at = now(),
           updated_at = now() WHERE id = $1`,
        [id, amount],
      );
      await client.query(
        `WITH numbered AS (${NEXT_SEQUENCE.replace("'live'", "'test'")})
         INSERT INTO events (id, business_id, environment, event, subject, body, created_at, sequence)
         SELECT $1, $2, 'test', 'payment.confirmed', $3, $4, now(), last_sequence FROM numbered`,
        [`evt_${randomBase62(24)}`, business, reference, JSON.stringify({ event: 'payment.confirmed', reference })],
      );
      await client.query('COMMIT');
      return reply.send({ success: true, data: { referenceNumber: reference, status: 'PAID' } });
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  },
);

app.get<{ Params: { reference: string } }>('/bare/intents/:reference', async (request, reply) => {
  const { rows } = await pool.query('SELECT * FROM payment_intents WHERE reference_number = $1', [
    request.params.reference,
  ]);
  if (!rows[0]) return reply.code(404).send({ success: false });
  return { success: true, data: rows[0] };
});

app.get<{ Querystring: { business: string; status?: string; limit?: string } }>('/bare/intents', async (request) => {
  const filter = [request.query.business, 'live', request.query.status ?? null];
  const where = 'business_id = $1 AND environment = $2 AND ($3::text IS NULL OR status = $3)';
  const total = await pool.query(`SELECT count(*) FROM payment_intents WHERE ${where}`, filter);
  const page = await pool.query(
    `SELECT * FROM payment_intents WHERE ${where} ORDER BY created_at DESC, reference_number DESC LIMIT $4`,
    [...filter, Number(request.query.limit ?? 20)],
  );
  return { success: true, data: { items: page.rows, total: Number(total.rows[0].count) } };
});

app.get<{ Querystring: { shop: string; search: string } }>('/bare/products', async (request) => {
  const filter = [request.query.shop, `%${request.query.search}%`];
  const where = 'shop_id = $1 AND deleted_at IS NULL AND name ILIKE $2';
  const total = await pool.query(`SELECT count(*) FROM products WHERE ${where}`, filter);
  const page = await pool.query(
    `SELECT * FROM products WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT 20`,
    filter,
  );
  return { success: true, data: { items: page.rows, total: Number(total.rows[0].count) } };
});

// The plain way to load a CSV: parse it, insert every row in chunks; no validation, no upsert.
app.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: 20 * 1024 * 1024 }, (_request, body, done) =>
  done(null, body),
);
app.post<{ Querystring: { shop: string }; Body: string }>('/bare/products/import', async (request) => {
  const rows = parse(request.body, { columns: true, bom: true, skip_empty_lines: true }) as Record<string, string>[];
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (let start = 0; start < rows.length; start += 500) {
      const chunk = rows.slice(start, start + 500);
      const values: unknown[] = [];
      const tuples = chunk.map((row, i) => {
        values.push(
          `bare_${randomBase62(16)}`,
          request.query.shop,
          businessId,
          `bare-${row.externalId}`,
          row.name,
          (row.name ?? '').toLowerCase(),
          Number(row.price),
        );
        const n = i * 7;
        return `($${n + 1}, $${n + 2}, $${n + 3}, 'test', $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7}, 'DISABLED', now(), now())`;
      });
      await client.query(
        `INSERT INTO products (id, shop_id, business_id, environment, external_id, name, search_name, price, status, created_at, updated_at)
         VALUES ${tuples.join(', ')}`,
        values,
      );
    }
    await client.query('COMMIT');
    return { success: true, data: { created: rows.length } };
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
});

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
