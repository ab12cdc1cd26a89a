import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { mostConstrained, rateLimitHeaders, rateLimitMessage, RateLimits, type RateLimitStatus } from './limiter';

const status = (over: Partial<RateLimitStatus>): RateLimitStatus => ({
  category: 'PATIENTS',
  limit: 500,
  remaining: 10,
  resetSeconds: 30,
  refused: false,
  ...over,
});

describe('RateLimits (memory)', () => {
  it('counts per caller and category in one window and refuses the point after the limit', async () => {
    const limits = new RateLimits(loadConfig({ RATE_LIMIT_TEMPLATES: '2' }), createLogger('silent'));
    const [first] = await limits.consume(['TEMPLATES'], 'demo:alice');
    expect(first).toMatchObject({ category: 'TEMPLATES', limit: 2, remaining: 1, refused: false });
    expect(first.resetSeconds).toBeGreaterThanOrEqual(59);
    expect(first.resetSeconds).toBeLessThanOrEqual(60);
    await limits.consume(['TEMPLATES'], 'demo:alice');
    const [third] = await limits.consume(['TEMPLATES'], 'demo:alice');
    expect(third).toMatchObject({ remaining: 0, refused: true });
    // Other callers and other categories have their own budgets.
    expect((await limits.consume(['TEMPLATES'], 'demo:bob'))[0].refused).toBe(false);
    expect((await limits.consume(['TEMPLATES'], 'acme:alice'))[0].refused).toBe(false);
    expect((await limits.consume(['PATIENTS'], 'demo:alice'))[0]).toMatchObject({ limit: 500, remaining: 499 });
    expect(await limits.peek('TEMPLATES', 'demo:alice')).toMatchObject({ remaining: 0, refused: false });
    expect(await limits.peek('TEMPLATES', 'demo:carol')).toMatchObject({ remaining: 2, resetSeconds: 60 });
    await limits.close();
  });

  it('reports the most constrained category: a refused one first, else the fewest points left', () => {
    expect(mostConstrained([status({ remaining: 400 }), status({ category: 'TEMPLATES', remaining: 5 })])!.category).toBe('TEMPLATES');
    expect(
      mostConstrained([status({ remaining: 0, refused: true, resetSeconds: 3 }), status({ category: 'EHR', remaining: 0, refused: true, resetSeconds: 40 })])!
        .category,
    ).toBe('EHR');
    expect(mostConstrained([])).toBeUndefined();
  });

  it('builds the contract headers and a message naming the wait', () => {
    expect(rateLimitHeaders(status({}))).toEqual({ 'X-RateLimit-Limit': '500', 'X-RateLimit-Remaining': '10', 'X-RateLimit-Reset': '30' });
    expect(rateLimitHeaders(status({ refused: true, remaining: 0 }))).toMatchObject({ 'Retry-After': '30', 'X-RateLimit-Remaining': '0' });
    expect(rateLimitMessage(status({ refused: true, resetSeconds: 37 }))).toMatch(/retry after 37 seconds$/);
  });
});
