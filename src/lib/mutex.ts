/** A FIFO lock: `lock()` resolves with the function that releases it. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private count = 0;

  /** The holder and the waiters (0 when free), for pool metrics. */
  get pending(): number {
    return this.count;
  }

  lock(): Promise<() => void> {
    this.count += 1;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      let released = false;
      release = () => {
        if (released) return;
        released = true;
        this.count -= 1;
        resolve();
      };
    });
    const acquired = this.tail.then(() => release);
    this.tail = this.tail.then(() => held);
    return acquired;
  }
}
