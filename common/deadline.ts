import { AppError, type ErrorDetail } from './errors';

/** Carries a request's deadline from the gateway to a subgraph over HTTP: the instant, in epoch milliseconds. */
export const DEADLINE_HEADER = 'x-caregraph-deadline';
/** Says on a deadline's 503 whether the operation can still take effect: `not-started` (it cannot) or `unknown` (it may). */
export const OUTCOME_HEADER = 'X-Request-Outcome';

export type RequestOutcome = 'not-started' | 'unknown';

/** The refusal of work that reaches a write after the deadline: nothing was done, so a retry is safe. */
export function deadlinePassed(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The request deadline passed before anything was written: nothing was done, and retrying is safe', [
    { message: 'not started', outcome: 'not-started' },
  ]);
}

/**
 * One request's deadline. The gateway makes it; subgraphs get the same object
 * in process, or one rebuilt from DEADLINE_HEADER over HTTP. `signal` aborts at
 * the deadline (for work that can stop, such as reads and outbound calls).
 *
 * A write may start only through `beginWrite()`, which refuses once the
 * deadline has passed; checking and recording happen in one synchronous step,
 * so the gateway's timer, which also runs on this thread, sees either "no
 * write began" (and may answer that nothing was done) or "a write began" (and
 * waits for its result).
 */
export class Deadline {
  private readonly controller = new AbortController();
  readonly signal: AbortSignal;
  private passed = false;
  private writing = false;

  /** The gateway's: its own timer calls `expire()`, so it alone decides when the signal aborts. */
  constructor(readonly at: number) {
    this.signal = this.controller.signal;
  }

  /** From DEADLINE_HEADER (a subgraph behind HTTP): expires on its own clock; undefined when absent or not a number. */
  static fromHeader(value: string | string[] | undefined): Deadline | undefined {
    const at = typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : NaN;
    if (!Number.isFinite(at)) return undefined;
    const deadline = new Deadline(at);
    const timer = setTimeout(() => deadline.expire(), Math.max(0, at - Date.now()));
    timer.unref();
    return deadline;
  }

  get expired(): boolean {
    return this.passed || Date.now() >= this.at;
  }

  /** Whether some part of the operation was allowed to start writing. */
  get writeBegun(): boolean {
    return this.writing;
  }

  /** From now on nothing may begin writing, and the signal stops work that can stop. */
  expire(): void {
    this.passed = true;
    this.controller.abort(new DOMException('The request deadline passed', 'TimeoutError'));
  }

  /** Call right before work that may commit: past the deadline it throws `deadlinePassed()`. */
  beginWrite(): void {
    if (this.expired) throw deadlinePassed();
    this.writing = true;
  }
}

/** The outcome an error names: `not-started` on a refusal made by deadlinePassed(). */
export function outcomeOf(details: readonly ErrorDetail[] | undefined): RequestOutcome | undefined {
  return details?.some((d) => d.outcome === 'not-started') ? 'not-started' : undefined;
}
