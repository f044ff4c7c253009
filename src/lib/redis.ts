import { Redis } from 'ioredis';

/**
 * A Redis client that fails fast instead of queueing commands while disconnected: callers
 * (rate limits, cache invalidation) decide what to do when Redis is away.
 */
export async function connectRedis(url: string): Promise<Redis> {
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
