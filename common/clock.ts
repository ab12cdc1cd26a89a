/**
 * Where services read the time for leases, retries, expiries and schedules,
 * and set their timers. Production runs on `systemClock`; tests pass a clock
 * they can move forward (test/support/clock.ts) so a one-hour retry schedule
 * is exercised without waiting an hour. Time the database decides (pg-boss's
 * job expiry and when a job starts, SQL `now()`) does not follow this clock:
 * a job due at an instant of this clock is therefore handed to pg-boss as a
 * delay from now (`startAfter` in seconds, due − `now()`), which pg-boss adds
 * to the database's `now()`, never as an absolute date. Work that must start
 * when this clock reaches its due time, not the database's, is also picked up
 * by a sweep that runs on this clock (the delivery worker's).
 */
export interface Clock {
  now(): Date;
  /** Calls `fn` once the clock has moved `ms` on; the handle never keeps the process alive. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer | undefined): void;
}

export type ClockTimer = { readonly __clockTimer: true };

export const systemClock: Clock = {
  now: () => new Date(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref() as unknown as ClockTimer,
  clearTimeout: (timer) => clearTimeout(timer as unknown as NodeJS.Timeout),
};
