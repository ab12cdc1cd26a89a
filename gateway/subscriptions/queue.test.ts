import { BoundedQueue } from './queue';

describe('BoundedQueue', () => {
  const overflow = () => new Error('too slow');

  it('delivers items in order, to a waiting reader at once', async () => {
    const queue = new BoundedQueue<number>(3, overflow, () => {});
    const first = queue.next();
    queue.push(1);
    queue.push(2);
    queue.push(3);
    expect(await first).toEqual({ value: 1, done: false });
    expect(await queue.next()).toEqual({ value: 2, done: false });
    expect(await queue.next()).toEqual({ value: 3, done: false });
  });

  it('ends with the overflow error and drops its buffer when the reader falls behind', async () => {
    let ended = 0;
    const queue = new BoundedQueue<number>(2, overflow, () => ended++);
    queue.push(1);
    queue.push(2);
    queue.push(3);
    expect(queue.size).toBe(0);
    expect(ended).toBe(1);
    await expect(queue.next()).rejects.toThrow('too slow');
    queue.push(4);
    expect(await queue.next()).toEqual({ value: undefined, done: true });
  });

  it('return() ends a pending read and the source subscription once', async () => {
    let ended = 0;
    const queue = new BoundedQueue<number>(2, overflow, () => ended++);
    const pending = queue.next();
    await queue.return();
    await queue.return();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(ended).toBe(1);
  });
});
