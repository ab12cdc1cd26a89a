import { auditHash, canonicalJson, findChainProblem, GENESIS_HASH, type ChainedFields } from './chain';

function chain(n: number) {
  const out: Array<ChainedFields & { hash: string }> = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const fields: ChainedFields = {
      tenantId: 'demo', seq, id: `a-${seq}`, actor: 'u', action: 'update', entityType: 'Patient', entityId: 'p-1',
      at: new Date(Date.UTC(2026, 10, 22, 9, 0, seq)), before: { family: 'A', n: seq }, after: { n: seq + 1, family: 'B' }, reason: null, prevHash: prev,
    };
    const hash = auditHash(fields);
    out.push({ ...fields, hash });
    prev = hash;
  }
  return out;
}

describe('audit hash chain', () => {
  it('canonical JSON ignores key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }));
  });

  it('accepts an intact chain, also when checked in stretches', () => {
    const records = chain(5);
    expect(findChainProblem(records)).toBeUndefined();
    expect(findChainProblem(records.slice(2), records[1])).toBeUndefined();
  });

  it('detects an edited, removed or re-linked record', () => {
    const edited = chain(4);
    edited[2] = { ...edited[2], after: { n: 999, family: 'B' } };
    expect(findChainProblem(edited)).toMatchObject({ seq: 3, problem: expect.stringMatching(/altered/) });

    const removed = chain(4);
    removed.splice(1, 1);
    expect(findChainProblem(removed)).toMatchObject({ seq: 3, problem: expect.stringMatching(/gap/) });

    // Re-hashing an edited record is not enough: the next link breaks.
    const rehashed = chain(4);
    rehashed[1] = { ...rehashed[1], reason: 'forged' };
    rehashed[1].hash = auditHash(rehashed[1]);
    expect(findChainProblem(rehashed)).toMatchObject({ seq: 3, problem: expect.stringMatching(/previous-hash/) });
  });
});
