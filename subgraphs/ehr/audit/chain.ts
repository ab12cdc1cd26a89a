import { createHash, createHmac, hkdfSync } from 'node:crypto';

/**
 * The audit hash chain: each record's hash covers its own fields and the hash
 * of the tenant's previous record, so editing, removing or reordering a stored
 * record breaks every hash after it. The first record of a tenant chains to
 * GENESIS_HASH.
 *
 * A plain hash only proves the chain is self-consistent: whoever can write the
 * table can recompute it. Records are therefore keyed (hash version 2:
 * HMAC-SHA-256 with a key the database never holds, AUDIT_HMAC_KEY). Version 1
 * (plain SHA-256) is what records written before the key existed carry; they
 * are accepted only as the start of a chain and only up to a record covered by
 * a signed checkpoint (checkpoints.ts), which seals them.
 */
export const GENESIS_HASH = '0'.repeat(64);

export const LEGACY_SHA256 = 1;
export const HMAC_SHA256 = 2;

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
  hashVersion: number;
}

/** The chain's key, derived from AUDIT_HMAC_KEY (checkpoints use another derivation of it). */
export function chainKey(auditKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', auditKey, 'caregraph', 'audit-chain-v2', 32));
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

/** What a record's hash covers, as canonical JSON: its fields and the previous record's hash. */
export function chainedJson(record: Omit<ChainedFields, 'hashVersion'>): string {
  return canonicalJson({
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
}

/** The record's hash in its own version; a version-2 hash needs the chain key. */
export function auditHash(record: ChainedFields, key: Buffer): string {
  const material = chainedJson(record);
  if (record.hashVersion === LEGACY_SHA256) return createHash('sha256').update(material).digest('hex');
  if (record.hashVersion === HMAC_SHA256) return createHmac('sha256', key).update(material).digest('hex');
  throw new Error(`unknown audit hash version ${record.hashVersion}`);
}

/** Access log entries written before the access log was chained: unkeyed, accepted only as its start (LogHead.unchainedUpTo). */
export const UNCHAINED = 0;
/** Access log entries with the NEN 7513 fields (responsible user, data category, grounds): keyed as version 2, over those too. */
export const ACCESS_NEN7513 = 3;

interface AccessChainedFields {
  tenantId: string;
  seq: number;
  id: string;
  actor: string;
  roles: string[];
  action: string;
  entityType: string;
  entityId: string;
  patientId: string | null;
  detail: unknown;
  at: Date;
  requestId: string | null;
  purpose: string | null;
  client: string | null;
  tool: string | null;
  /** Version 3 on: null in older entries, whose hash does not cover them. */
  responsibleUser?: string | null;
  dataCategory?: string | null;
  grounds?: string | null;
  prevHash: string;
  hashVersion: number;
}

/**
 * An access log entry's hash: the same keyed chain as the audit trail's, over
 * the entry's fields and the previous entry's hash (`log` keeps the two
 * chains' hashes apart). An unchained entry's stored hash is GENESIS_HASH.
 */
export function accessLogHash(entry: AccessChainedFields, key: Buffer): string {
  if (entry.hashVersion === UNCHAINED) return GENESIS_HASH;
  if (entry.hashVersion !== HMAC_SHA256 && entry.hashVersion !== ACCESS_NEN7513) throw new Error(`unknown access log hash version ${entry.hashVersion}`);
  // Version 2 entries keep the material they were hashed with, so they stay verifiable beside version 3 ones.
  const nen7513 =
    entry.hashVersion === ACCESS_NEN7513
      ? { responsibleUser: entry.responsibleUser ?? null, dataCategory: entry.dataCategory ?? null, grounds: entry.grounds ?? null }
      : {};
  const material = canonicalJson({
    ...nen7513,
    log: 'access',
    tenantId: entry.tenantId,
    seq: entry.seq,
    id: entry.id,
    actor: entry.actor,
    roles: entry.roles,
    action: entry.action,
    entityType: entry.entityType,
    entityId: entry.entityId,
    patientId: entry.patientId,
    detail: entry.detail ?? null,
    at: entry.at.toISOString(),
    requestId: entry.requestId,
    purpose: entry.purpose,
    client: entry.client,
    tool: entry.tool,
    prevHash: entry.prevHash,
  });
  return createHmac('sha256', key).update(material).digest('hex');
}

export interface ChainProblem {
  seq: number;
  id: string;
  problem: string;
}

export interface ChainCheck<R extends ChainLink = ChainedFields & { hash: string }> {
  /** The chain key (chainKey(AUDIT_HMAC_KEY)). */
  key: Buffer;
  /** Highest seq covered by a signed checkpoint: legacy (version 1) records beyond it are not trusted. */
  sealedUpTo: number;
  /** The chain's unkeyed version and how a record's hash is computed: the audit trail's by default. */
  legacyVersion?: number;
  hashOf?: (record: R, key: Buffer) => string;
  /** The chain's keyed versions (HMAC_SHA256 by default), oldest first: a record never carries an older one than the record before it. */
  keyedVersions?: readonly number[];
}

/** What the walk reads of any chained row. */
export interface ChainLink {
  seq: number;
  id: string;
  prevHash: string;
  hash: string;
  hashVersion: number;
}

/**
 * Checks one stretch of a tenant's chain, in seq order, continuing from the
 * record before it (`previous`; undefined at the start of the chain).
 * Returns the first problem, or undefined when the stretch is intact.
 */
export function findChainProblem<R extends ChainLink = ChainedFields & { hash: string }>(
  records: R[],
  check: ChainCheck<R>,
  previous?: { seq: number; hash: string; hashVersion: number },
): ChainProblem | undefined {
  const legacy = check.legacyVersion ?? LEGACY_SHA256;
  const hashOf = check.hashOf ?? ((record: R, key: Buffer) => auditHash(record as unknown as ChainedFields, key));
  let expectedSeq = previous ? previous.seq + 1 : 1;
  let expectedPrev = previous ? previous.hash : GENESIS_HASH;
  const keyedVersions = check.keyedVersions ?? [HMAC_SHA256];
  let keyed = previous ? previous.hashVersion !== legacy : false;
  let lastKeyed = previous && previous.hashVersion !== legacy ? keyedVersions.indexOf(previous.hashVersion) : -1;
  for (const record of records) {
    if (record.seq !== expectedSeq) {
      return { seq: record.seq, id: record.id, problem: `sequence gap: expected record ${expectedSeq}, found ${record.seq} (a record was removed)` };
    }
    if (record.prevHash !== expectedPrev) {
      return { seq: record.seq, id: record.id, problem: 'previous-hash link does not match the record before it' };
    }
    if (record.hashVersion !== legacy && !keyedVersions.includes(record.hashVersion)) {
      return { seq: record.seq, id: record.id, problem: `unknown hash version ${record.hashVersion}` };
    }
    if (record.hashVersion !== legacy && keyedVersions.indexOf(record.hashVersion) < lastKeyed) {
      return { seq: record.seq, id: record.id, problem: `hash version ${record.hashVersion} after a newer one: the record was rewritten in an older form` };
    }
    if (record.hashVersion === legacy && (keyed || record.seq > check.sealedUpTo)) {
      return {
        seq: record.seq,
        id: record.id,
        problem: 'unkeyed (plain SHA-256) record where only keyed records may be: the chain was rewritten without the key',
      };
    }
    if (hashOf(record, check.key) !== record.hash) {
      return { seq: record.seq, id: record.id, problem: "hash does not match the record's content (the record was altered)" };
    }
    keyed ||= record.hashVersion !== legacy;
    if (record.hashVersion !== legacy) lastKeyed = keyedVersions.indexOf(record.hashVersion);
    expectedSeq = record.seq + 1;
    expectedPrev = record.hash;
  }
  return undefined;
}
