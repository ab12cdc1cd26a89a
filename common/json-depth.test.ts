import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';

describe('JSON nesting depth', () => {
  it('counts objects and arrays as levels, scalars as none', () => {
    expect(nestsDeeperThan('x', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: null }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: null }] }, 2)).toBe(true);
    expect(nestsDeeperThan([[], [[[]]], {}], 3)).toBe(true);
  });

  it('measures 500,000 levels (what fits in 1 MiB of arrays) without recursion', () => {
    const deep = JSON.parse(`${'['.repeat(500_000)}${']'.repeat(500_000)}`);
    expect(nestsDeeperThan(deep, MAX_JSON_DEPTH)).toBe(true);
  });

  it('allows exactly the maximum', () => {
    let value: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) value = { a: value };
    expect(nestsDeeperThan(value, MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan({ a: value }, MAX_JSON_DEPTH)).toBe(true);
  });
});
