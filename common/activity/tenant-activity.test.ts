import { MAX_CALLERS, MAX_ERRORS, MemoryTenantActivity } from './tenant-activity';

const error = (n: number) => ({ at: new Date(0).toISOString(), code: 'FORBIDDEN', message: `e${n}`, operation: 'op', sub: 's', requestId: `r${n}` });

describe('MemoryTenantActivity', () => {
  it('counts calls per category in the current minute only, per tenant', async () => {
    let now = 60_000;
    const activity = new MemoryTenantActivity(() => now);
    activity.recordCall('demo', { sub: 'a', roles: ['admin'] }, ['MESSAGES_SEND', 'TEMPLATES']);
    activity.recordCall('demo', { sub: 'b', roles: ['nurse'] }, ['MESSAGES_SEND']);
    activity.recordCall('acme', { sub: 'a', roles: ['admin'] }, ['MESSAGES_SEND']);
    expect((await activity.read('demo')).usage).toEqual([
      { category: 'MESSAGES_SEND', count: 2 },
      { category: 'TEMPLATES', count: 1 },
    ]);
    now += 60_000;
    expect((await activity.read('demo')).usage).toEqual([]);
  });

  it('keeps the latest errors and callers, bounded, newest first', async () => {
    const now = 1_000;
    const activity = new MemoryTenantActivity(() => now);
    for (let i = 0; i < MAX_ERRORS + 5; i++) activity.recordError('demo', error(i));
    const { recentErrors } = await activity.read('demo');
    expect(recentErrors).toHaveLength(MAX_ERRORS);
    expect(recentErrors[0].message).toBe(`e${MAX_ERRORS + 4}`);
    for (let i = 0; i < MAX_CALLERS + 5; i++) activity.recordCall('demo', { sub: `u${i}`, roles: ['admin'] }, []);
    activity.recordCall('demo', { sub: 'u10', roles: ['admin'] }, []);
    const { recentCallers } = await activity.read('demo');
    expect(recentCallers).toHaveLength(MAX_CALLERS);
    expect(recentCallers[0].sub).toBe('u10');
    expect(recentCallers.map((c) => c.sub)).not.toContain('u0');
  });
});
