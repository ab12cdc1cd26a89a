import type { Clock, ClockTimer } from '../../common/clock';

/**
 * A clock for tests: real time plus an offset that `advance` moves forward,
 * firing the timers that fall due. Time keeps flowing between advances, so
 * everything the test does not move behaves as on the system clock.
 */
export class TestClock implements Clock {
  private offset = 0;
  private readonly timers = new Map<ClockTimer, { due: number; fn: () => void; real: NodeJS.Timeout }>();

  now(): Date {
    return new Date(Date.now() + this.offset);
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const handle = { __clockTimer: true } as ClockTimer;
    const due = this.now().getTime() + ms;
    const real = setTimeout(() => this.fire(handle), ms).unref();
    this.timers.set(handle, { due, fn, real });
    return handle;
  }

  clearTimeout(timer: ClockTimer | undefined): void {
    const entry = timer && this.timers.get(timer);
    if (!entry) return;
    clearTimeout(entry.real);
    this.timers.delete(timer);
  }

  /** Moves the clock `ms` forward and runs every timer now due. */
  advance(ms: number): void {
    this.offset += ms;
    const now = this.now().getTime();
    for (const [handle, { due }] of [...this.timers]) if (due <= now) this.fire(handle);
  }

  private fire(handle: ClockTimer): void {
    const entry = this.timers.get(handle);
    if (!entry) return;
    this.clearTimeout(handle);
    entry.fn();
  }
}
