import type { Redis } from 'ioredis';

/**
 * A Redis client that fails fast instead of queueing commands while disconnected: callers
 * (rate limits, cache invalidation) decide what to do when Redis is away. ioredis is loaded here,
 * on the first connection: most embedded installs have no Redis, and a start need not load it.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 1000,
  });
  client.on('error', () => {
    // ioredis reconnects by itself; failures surface on the commands that need Redis.
  });
  await client.connect();
  return client;
}
