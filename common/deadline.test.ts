import { once } from 'node:events';
import { Deadline, outcomeOf } from './deadline';

describe('Deadline', () => {
  it('is rebuilt from the header a subgraph receives, and expires on its own clock', async () => {
    const deadline = Deadline.fromHeader(String(Date.now() + 50))!;
    expect(deadline.expired).toBe(false);
    deadline.beginWrite();
    expect(deadline.writeBegun).toBe(true);
    await once(deadline.signal, 'abort');
    expect(deadline.expired).toBe(true);
  });

  it('ignores a header that is not an instant', () => {
    for (const value of [undefined, '', 'soon', '1e12', '-5', ['1', '2']]) expect(Deadline.fromHeader(value)).toBeUndefined();
  });

  it('refuses to begin a write once expired, naming the outcome not-started', () => {
    const deadline = new Deadline(Date.now() + 60_000);
    deadline.expire();
    expect(deadline.signal.aborted).toBe(true);
    let refusal: any;
    try {
      deadline.beginWrite();
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/nothing was done/) });
    expect(outcomeOf(refusal.details)).toBe('not-started');
    expect(deadline.writeBegun).toBe(false);
  });
});
