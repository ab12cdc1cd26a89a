import { fitToBudget } from './budget';

const item = (n: number) => ({ id: `obs-${n}`, text: 'x'.repeat(200) });

describe('fitToBudget', () => {
  it('leaves an answer within the budget untouched', () => {
    const answer = fitToBudget({ items: [item(1), item(2)] }, 10_000);
    expect(answer.items).toHaveLength(2);
    expect(answer.budget).toMatchObject({ truncated: false, omittedItems: 0 });
    expect(answer.budget.bytes).toBe(Buffer.byteLength(JSON.stringify(answer)));
  });

  it('drops the oldest (last) items of the largest list until the JSON fits', () => {
    const answer = fitToBudget({ vitals: Array.from({ length: 20 }, (_, i) => item(i)), labs: [item(100)] }, 2_000);
    expect(Buffer.byteLength(JSON.stringify(answer))).toBeLessThanOrEqual(2_000);
    expect(answer.budget.bytes).toBe(Buffer.byteLength(JSON.stringify(answer)));
    expect(answer.budget.truncated).toBe(true);
    expect(answer.vitals[0].id).toBe('obs-0');
    expect(answer.vitals.length + answer.labs.length + answer.budget.omittedItems).toBe(21);
  });

  it('reports truncation when even empty lists do not fit', () => {
    const answer = fitToBudget({ note: 'y'.repeat(3_000), items: [item(1)] }, 1_000);
    expect(answer.items).toHaveLength(0);
    expect(answer.budget).toMatchObject({ truncated: true, omittedItems: 1 });
  });
});
