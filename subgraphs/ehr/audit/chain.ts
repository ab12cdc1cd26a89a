import { createHash } from 'node:crypto';

/**
 * The audit hash chain: each record's hash covers its own fields and the hash
 * of the tenant's previous record, so editing, removing or reordering a stored
 * record breaks every hash after it. The first record of a tenant chains to
 * GENESIS_HASH.
 */
export const GENESIS_HASH = '0'.repeat(64);

export interface ChainedFields {
  tenantId: string;
  seq: number;
  id: string;
  actor: string;
  action: string;
  entityType: string;
  entityId: string;
  at: Date;
  before: unknown;
  after: unknown;
  reason: string | null;
  prevHash: string;
}

/** JSON with object keys sorted at every level: PostgreSQL jsonb does not keep key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function auditHash(record: ChainedFields): string {
  const material = canonicalJson({
    tenantId: record.tenantId,
    seq: record.seq,
    id: record.id,
    actor: record.actor,
    action: record.action,
    entityType: record.entityType,
    entityId: record.entityId,
    at: record.at.toISOString(),
    before: record.before ?? null,
    after: record.after ?? null,
    reason: record.reason ?? null,
    prevHash: record.prevHash,
  });
  return createHash('sha256').update(material).digest('hex');
}

export interface ChainProblem {
  seq: number;
  id: string;
  problem: string;
}

/**
 * Checks one stretch of a tenant's chain, in seq order, continuing from the
 * record before it (`previous`; undefined at the start of the chain).
 * Returns the first problem, or undefined when the stretch is intact.
 */
export function findChainProblem(
  records: Array<ChainedFields & { hash: string }>,
  previous?: { seq: number; hash: string },
): ChainProblem | undefined {
  let expectedSeq = previous ? previous.seq + 1 : 1;
  let expectedPrev = previous ? previous.hash : GENESIS_HASH;
  for (const record of records) {
    if (record.seq !== expectedSeq) {
      return { seq: record.seq, id: record.id, problem: `sequence gap: expected record ${expectedSeq}, found ${record.seq} (a record was removed)` };
    }
    if (record.prevHash !== expectedPrev) {
      return { seq: record.seq, id: record.id, problem: 'previous-hash link does not match the record before it' };
    }
    if (auditHash(record) !== record.hash) {
      return { seq: record.seq, id: record.id, problem: 'hash does not match the record\'s content (the record was altered)' };
    }
    expectedSeq = record.seq + 1;
    expectedPrev = record.hash;
  }
  return undefined;
}
