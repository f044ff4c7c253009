import type { Redis } from 'ioredis';

const CHANNEL = 'developer-api:key-cache:invalidate';

/**
 * Tells every API process that key or business access data changed. Without Redis only this
 * process hears it, and the cache TTL bounds how long other processes may serve stale data.
 */
export class CacheInvalidationBus {
  private subscriber: Redis | undefined;

  constructor(
    private readonly publisher: Redis | undefined,
    private readonly onInvalidate: () => void,
  ) {}

  async start(): Promise<void> {
    if (!this.publisher) return;
    this.subscriber = this.publisher.duplicate({ enableOfflineQueue: true });
    this.subscriber.on('error', () => {});
    this.subscriber.on('message', () => this.onInvalidate());
    await this.subscriber.subscribe(CHANNEL);
    // Messages sent while this process was cut off from Redis are lost: forget everything cached
    // once the connection is back (ioredis subscribes again by itself).
    this.subscriber.on('ready', () => this.onInvalidate());
  }

  async publish(): Promise<void> {
    this.onInvalidate();
    if (this.publisher) await this.publisher.publish(CHANNEL, String(Date.now())).catch(() => {});
  }

  async close(): Promise<void> {
    if (this.subscriber) this.subscriber.disconnect();
  }
}
