import { createHash, randomBytes } from 'node:crypto';
import {
  ACCESS_NEN7513,
  accessLogHash,
  auditHash,
  canonicalJson,
  chainedJson,
  chainKey,
  findChainProblem,
  GENESIS_HASH,
  HMAC_SHA256,
  LEGACY_SHA256,
  UNCHAINED,
  type ChainedFields,
} from './chain';

const key = chainKey(randomBytes(32));

function chain(n: number, versionOf: (seq: number) => number = () => HMAC_SHA256) {
  const out: Array<ChainedFields & { hash: string }> = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const fields: ChainedFields = {
      tenantId: 'demo',
      seq,
      id: `a-${seq}`,
      actor: 'u',
      action: 'update',
      entityType: 'Patient',
      entityId: 'p-1',
      at: new Date(Date.UTC(2026, 10, 22, 9, 0, seq)),
      before: { family: 'A', n: seq },
      after: { n: seq + 1, family: 'B' },
      reason: null,
      prevHash: prev,
      hashVersion: versionOf(seq),
    };
    const hash = auditHash(fields, key);
    out.push({ ...fields, hash });
    prev = hash;
  }
  return out;
}

/** What anyone who can write the table and has read the code can compute: the plain SHA-256 of a record. */
const plainSha256 = (r: ChainedFields) => createHash('sha256').update(chainedJson(r)).digest('hex');

describe('audit hash chain', () => {
  const sealedNone = { key, sealedUpTo: 0 };

  it('canonical JSON ignores key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }));
  });

  it('accepts an intact keyed chain, also when checked in stretches', () => {
    const records = chain(5);
    expect(findChainProblem(records, sealedNone)).toBeUndefined();
    expect(findChainProblem(records.slice(2), sealedNone, records[1])).toBeUndefined();
  });

  it('[AUD-003] detects an edited, removed or re-linked record', () => {
    const edited = chain(4);
    edited[2] = { ...edited[2], after: { n: 999, family: 'B' } };
    expect(findChainProblem(edited, sealedNone)).toMatchObject({ seq: 3, problem: expect.stringMatching(/altered/) });

    const removed = chain(4);
    removed.splice(1, 1);
    expect(findChainProblem(removed, sealedNone)).toMatchObject({ seq: 3, problem: expect.stringMatching(/gap/) });

    // Re-hashing an edited record is not enough: the next link breaks.
    const rehashed = chain(4);
    rehashed[1] = { ...rehashed[1], reason: 'forged' };
    rehashed[1].hash = auditHash(rehashed[1], key);
    expect(findChainProblem(rehashed, sealedNone)).toMatchObject({ seq: 3, problem: expect.stringMatching(/previous-hash/) });
  });

  it('detects a rewrite that recomputes every following hash without the key', () => {
    const records = chain(5);
    let prev = records[0].hash;
    for (const record of records.slice(1)) {
      if (record.seq === 2) record.after = { n: 999, forged: true };
      record.prevHash = prev;
      // Kept as keyed records: SHA-256 is not the keyed hash.
      record.hash = plainSha256(record);
      prev = record.hash;
    }
    expect(findChainProblem(records, sealedNone)).toMatchObject({ seq: 2, problem: expect.stringMatching(/altered/) });
    // Marked as legacy records instead: refused after a keyed record, and beyond the sealed part.
    for (const record of records) record.hashVersion = LEGACY_SHA256;
    expect(findChainProblem(records.slice(1), sealedNone, { ...records[0], hashVersion: HMAC_SHA256 })).toMatchObject({
      seq: 2,
      problem: expect.stringMatching(/unkeyed/),
    });
    records[0].hash = plainSha256(records[0]);
    let p = records[0].hash;
    for (const record of records.slice(1)) {
      record.prevHash = p;
      record.hash = plainSha256(record);
      p = record.hash;
    }
    expect(findChainProblem(records, sealedNone)).toMatchObject({ seq: 1, problem: expect.stringMatching(/unkeyed/) });
  });

  it('accepts legacy SHA-256 records at the start of a chain up to the sealed seq, keyed ones after', () => {
    const records = chain(5, (seq) => (seq <= 3 ? LEGACY_SHA256 : HMAC_SHA256));
    expect(records[0].hash).toBe(plainSha256(records[0]));
    expect(findChainProblem(records, { key, sealedUpTo: 3 })).toBeUndefined();
    expect(findChainProblem(records, { key, sealedUpTo: 2 })).toMatchObject({ seq: 3, problem: expect.stringMatching(/unkeyed/) });
    // A keyed hash made with another key does not verify.
    expect(findChainProblem(records, { key: chainKey(randomBytes(32)), sealedUpTo: 3 })).toMatchObject({ seq: 4, problem: expect.stringMatching(/altered/) });
  });
});

describe('access log hash chain', () => {
  type Entry = Parameters<typeof accessLogHash>[0] & { hash: string };
  const check = { key, sealedUpTo: 0, legacyVersion: UNCHAINED, hashOf: accessLogHash, keyedVersions: [HMAC_SHA256, ACCESS_NEN7513] };

  function accessChain(versions: number[]): Entry[] {
    const out: Entry[] = [];
    let prev = GENESIS_HASH;
    versions.forEach((hashVersion, i) => {
      const nen7513 = hashVersion === ACCESS_NEN7513;
      const fields = {
        tenantId: 'demo',
        seq: i + 1,
        id: `l-${i + 1}`,
        actor: 'dr-jansen',
        roles: ['clinician'],
        action: 'read',
        entityType: 'Patient',
        entityId: 'p-1',
        patientId: 'p-1',
        detail: null,
        at: new Date(Date.UTC(2026, 10, 22, 9, 0, i)),
        requestId: null,
        purpose: nen7513 ? 'TREAT' : null,
        client: null,
        tool: null,
        responsibleUser: nen7513 ? 'dr-jansen' : null,
        dataCategory: nen7513 ? 'demographics' : null,
        grounds: nen7513 ? 'treatment' : null,
        prevHash: prev,
        hashVersion,
      };
      const hash = accessLogHash(fields, key);
      out.push({ ...fields, hash });
      prev = hash;
    });
    return out;
  }

  it('[LOG-007] accepts entries of hash version 2 followed by version 3 ones, which also cover responsible user, data category and grounds', () => {
    const entries = accessChain([HMAC_SHA256, HMAC_SHA256, ACCESS_NEN7513, ACCESS_NEN7513]);
    expect(findChainProblem(entries, check)).toBeUndefined();
    for (const field of ['responsibleUser', 'dataCategory', 'grounds'] as const) {
      const edited = entries.map((e) => ({ ...e }));
      edited[2][field] = 'someone else';
      expect(findChainProblem(edited, check)).toMatchObject({ seq: 3, problem: expect.stringContaining('altered') });
    }
    // A version 2 entry's hash never covered them: it stays what it was.
    expect(accessLogHash({ ...entries[0], grounds: 'treatment' }, key)).toBe(entries[0].hash);
  });

  it('[LOG-007] refuses a version 2 entry after a version 3 one (an entry rewritten in the older form)', () => {
    expect(findChainProblem(accessChain([HMAC_SHA256, ACCESS_NEN7513, HMAC_SHA256]), check)).toMatchObject({
      seq: 3,
      problem: expect.stringContaining('after a newer one'),
    });
  });
});
