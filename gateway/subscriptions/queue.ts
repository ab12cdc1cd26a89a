/**
 * The buffer between the event bus and one subscription. It holds at most
 * `capacity` undelivered items: a consumer that falls further behind ends
 * with `overflow()` (its buffer is dropped at once), so a slow client can
 * never grow the server's memory.
 */
export class BoundedQueue<T> implements AsyncIterableIterator<T> {
  private items: T[] = [];
  private waiting?: { resolve: (result: IteratorResult<T>) => void; reject: (error: Error) => void };
  private failure?: Error;
  private ended = false;

  constructor(
    private readonly capacity: number,
    private readonly overflow: () => Error,
    /** Called once when the queue ends for any reason (unsubscribe from the source here). */
    private readonly onEnd: () => void,
  ) {}

  push(item: T): void {
    if (this.ended) return;
    if (this.waiting) {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting.resolve({ value: item, done: false });
      return;
    }
    if (this.items.length >= this.capacity) {
      this.items = [];
      this.failure = this.overflow();
      this.end();
      return;
    }
    this.items.push(item);
  }

  get size(): number {
    return this.items.length;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
    if (this.failure) {
      const failure = this.failure;
      this.failure = undefined;
      return Promise.reject(failure);
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.items = [];
    this.failure = undefined;
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<T>> {
    void this.return();
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.waiting) {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting.resolve({ value: undefined, done: true });
    }
    this.onEnd();
  }
}
