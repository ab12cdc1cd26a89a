import { deadlinePassed } from './deadline';

/**
 * At most `limit` tasks at once in this process; the others wait their turn, first come first served.
 * A waiting task whose signal aborts (its request's deadline) leaves the queue with `deadlinePassed()`,
 * since nothing of it has run. Hand-written rather than p-limit: a queued task must be able to leave on
 * its request's deadline, and the counts feed the metrics.
 */
export class ConcurrencyGate {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  private waitedTotal = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`a concurrency limit is a whole number ≥ 1 (got ${limit})`);
  }

  get running(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Tasks that had to wait for a turn since the gate was made. */
  get waited(): number {
    return this.waitedTotal;
  }

  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw deadlinePassed();
    if (this.active < this.limit) this.active++;
    else await this.turn(signal);
    try {
      return await task();
    } finally {
      const next = this.queue.shift();
      // The finishing task hands its place to the next one, so `active` never drops below the queue's demand.
      if (next) next();
      else this.active--;
    }
  }

  private turn(signal: AbortSignal | undefined): Promise<void> {
    this.waitedTotal++;
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        const at = this.queue.indexOf(go);
        if (at >= 0) this.queue.splice(at, 1);
        reject(deadlinePassed());
      };
      this.queue.push(go);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }
}
