import { BoundedLabel, createMetricsRegistry, defineOnce, withTimeout } from './registry';

describe('metrics registry helpers', () => {
  it('keeps the first distinct label values and counts later ones as other', () => {
    const names = new BoundedLabel(2);
    expect([names.value('A'), names.value('B'), names.value('C'), names.value('A'), names.value(undefined)]).toEqual(['A', 'B', 'other', 'A', 'anonymous']);
  });

  it('defines an area once per registry, and again on another registry', () => {
    const registry = createMetricsRegistry();
    let defined = 0;
    const define = () => ++defined;
    expect([defineOnce(registry, 'area', define), defineOnce(registry, 'area', define), defineOnce(createMetricsRegistry(), 'area', define)]).toEqual([
      1, 1, 2,
    ]);
  });

  it('bounds a slow collection', async () => {
    await expect(withTimeout(new Promise(() => {}), 10, 'the query')).rejects.toThrow('the query took longer than 10 ms');
    await expect(withTimeout(Promise.resolve(3), 10, 'the query')).resolves.toBe(3);
  });
});
