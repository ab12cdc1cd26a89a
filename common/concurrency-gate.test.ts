import { ConcurrencyGate } from './concurrency-gate';
import { AppError } from './errors';

/** A task that runs until `release()` is called, recording when it started. */
function heldTask(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { run: () => (started.push(name), done.then(() => name)), release: () => release() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ConcurrencyGate', () => {
  it('[OPS-005] runs at most `limit` tasks at once and lets the others in, first come first served', async () => {
    const gate = new ConcurrencyGate(2);
    const started: string[] = [];
    const tasks = ['a', 'b', 'c', 'd'].map((name) => heldTask(started, name));
    const results = tasks.map((task) => gate.run(task.run));
    await tick();
    expect(started).toEqual(['a', 'b']);
    expect({ running: gate.running, waiting: gate.waiting, waited: gate.waited }).toEqual({ running: 2, waiting: 2, waited: 2 });
    tasks[1].release();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    tasks[0].release();
    tasks[2].release();
    tasks[3].release();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect({ running: gate.running, waiting: gate.waiting }).toEqual({ running: 0, waiting: 0 });
  });

  it('[OPS-005] frees the place of a task that fails', async () => {
    const gate = new ConcurrencyGate(1);
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(async () => 'next')).toBe('next');
    expect(gate.running).toBe(0);
  });

  it('[OPS-005] a waiting task whose deadline passes leaves the queue with a 503 that says nothing was done, and never runs', async () => {
    const gate = new ConcurrencyGate(1);
    const started: string[] = [];
    const first = heldTask(started, 'first');
    const late = heldTask(started, 'late');
    const running = gate.run(first.run);
    const deadline = new AbortController();
    const waiting = gate.run(late.run, deadline.signal);
    const after = gate.run(async () => (started.push('after'), 'after'));
    await tick();
    deadline.abort();
    const refusal = await waiting.catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: [{ outcome: 'not-started' }] });
    expect(gate.waiting).toBe(1);
    first.release();
    expect(await running).toBe('first');
    expect(await after).toBe('after');
    expect(started).toEqual(['first', 'after']);
  });

  it('[OPS-005] refuses a task whose deadline has already passed without running it', async () => {
    const gate = new ConcurrencyGate(3);
    const deadline = new AbortController();
    deadline.abort();
    let ran = false;
    await expect(gate.run(async () => (ran = true), deadline.signal)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(ran).toBe(false);
  });
});
