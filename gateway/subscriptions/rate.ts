const WINDOW_MS = 60_000;

/**
 * WebSocket connections per client IP: each IP gets `limit` connections per
 * minute, counted from its first connection. In memory per gateway instance:
 * it guards this instance's sockets, which is what it protects.
 */
export class ConnectionRateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private lastSweep = Date.now();

  constructor(private readonly limit: number) {}

  /** Counts one connection; returns 0 when allowed, else the seconds until the IP may connect again. */
  take(ip: string, now = Date.now()): number {
    if (now - this.lastSweep >= WINDOW_MS) this.sweep(now);
    let window = this.windows.get(ip);
    if (!window || now - window.start >= WINDOW_MS) {
      window = { start: now, count: 0 };
      this.windows.set(ip, window);
    }
    if (window.count >= this.limit) return Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000));
    window.count++;
    return 0;
  }

  /** Forgets finished windows, so memory follows the IPs of the last minute only. */
  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [ip, window] of this.windows) if (now - window.start >= WINDOW_MS) this.windows.delete(ip);
  }
}
