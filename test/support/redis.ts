import { Redis } from 'ioredis';

/** The Redis used by tests: TEST_REDIS_URL, else a local one if it answers. */
export async function testRedisUrl(): Promise<string | undefined> {
  const url = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return url;
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}
