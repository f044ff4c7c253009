import pg from 'pg';
import { LISTENER_APPLICATION_NAME, type Listener } from './database.js';

/** A connection of its own that LISTENs, and connects and LISTENs again when it is lost. */
export function listenOnPostgres(
  url: string,
  channel: string,
  onNotify: (payload?: string) => void,
  onLost?: (error: unknown) => void,
): Listener {
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let waitMs = 100;

  function lost(client: pg.Client, error: unknown): void {
    if (client !== current) return;
    current = undefined;
    client.end().catch(() => {});
    if (closed) return;
    onLost?.(error);
    retry = setTimeout(connect, waitMs);
    waitMs = Math.min(waitMs * 2, 5000);
  }

  function connect(): void {
    if (closed) return;
    const client = new pg.Client({
      connectionString: url,
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
    });
    current = client;
    client.on('error', (error) => lost(client, error));
    client.on('end', () => lost(client, new Error('the listening connection ended')));
    client.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${client.escapeIdentifier(channel)}`))
      .then(() => {
        if (client !== current) return;
        waitMs = 100;
        onNotify();
      })
      .catch((error: unknown) => lost(client, error));
  }

  connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const client = current;
      current = undefined;
      await client?.end().catch(() => {});
    },
  };
}
