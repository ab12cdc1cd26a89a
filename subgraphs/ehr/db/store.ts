import { randomUUID } from 'node:crypto';
import type { Identity } from '../../../common/auth/principal';
import { tenantBound } from '../../../common/db/tenant-session';
import type { EhrPrisma } from './client';
import { inTenantTransaction, tenantScopedClient, type TenantClient, type TenantTx } from './tenant';
import { ACCESS_NEN7513, accessLogHash, auditHash, GENESIS_HASH, HMAC_SHA256 } from '../audit/chain';
import { ACCESS_AREAS, impliedPurpose, readGrounds, type AccessArea } from '../policy/rules';
import type { ReadAccount } from '../../../common/graphql/shared-reads';

/** The part of a Prisma transaction client the writer needs (scoped or not). */
export type AuditTx = Pick<TenantTx, 'auditRecord' | '$queryRaw'>;

/** What a change did to one record: the audit record's variable part. */
export interface AuditEntry {
  action: string;
  entityType: string;
  entityId: string;
  /** Snapshots as stored: encrypted fields stay ciphertext, so the trail holds no plaintext of them. */
  before?: unknown;
  after?: unknown;
}

export interface AccessEntry {
  entityType: string;
  entityId: string;
  /** Null for a population statistic (action `query`), which shows no patient's data. */
  patientId: string | null;
  action?: 'read' | 'list' | 'query';
  /** The purpose of use declared for this read; defaults to the agent's (MCP) purpose. */
  purpose?: string;
  /** A population statistic's query, patients and compositions. */
  detail?: PopulationQuery;
  /** The data category read (dataCategory): a composition's data area where the caller knows it; else from entityType. */
  category?: string;
}

/** The data category of an entry that names none, by what was read. */
const CATEGORY_OF: Record<string, string> = {
  Patient: 'demographics',
  Appointment: 'appointment',
  EHR: 'ehr',
  Ehr: 'ehr',
  EhrStatus: 'ehr',
  Directory: 'directory',
  XdsDocument: 'document',
  XdsSubmissionSet: 'document',
  AqlQuery: 'population statistic',
};

/**
 * The policy area whose decision gives an entry's grounds: its category when that is one; `clinical` (clinical
 * data of no one area) as any data area, which the consent rules treat alike; record-level data (EHR, directory,
 * a population statistic) as demographics.
 */
function groundsArea(category: string): AccessArea {
  if ((ACCESS_AREAS as readonly string[]).includes(category)) return category as AccessArea;
  return category === 'clinical' ? 'observation' : 'demographics';
}

/** A population statistic (aggregates only, over many patients) as the access log keeps it. */
export interface PopulationQuery {
  language: 'AQL';
  query: string;
  parameters: Record<string, unknown>;
  /** How many patients and compositions the statistic was computed from. */
  patients: number;
  /** False where `patients` is a lower bound (a COUNT from the kept counts of values); absent in entries before it. */
  patientsExact?: boolean;
  compositions: number;
}

/** Appends audit records to the tenant's hash chain inside the change's transaction. */
export class AuditWriter {
  private locked = false;
  written = 0;

  /** `chainKey` is chainKey(AUDIT_HMAC_KEY) (audit/chain.ts). */
  constructor(
    private readonly tx: TenantTx | AuditTx,
    private readonly tenantId: string,
    private readonly actor: string,
    private readonly reason: string | null,
    private readonly chainKey: Buffer,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    if (!this.locked) {
      // One writer per tenant chain at a time, until this transaction ends.
      await this.tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`caregraph-audit:${this.tenantId}`}, 0))::text AS locked`;
      this.locked = true;
    }
    // The tenant is named here as well, so the writer is also correct on an unscoped client (seed, key rotation).
    const last = await this.tx.auditRecord.findFirst({ where: { tenantId: this.tenantId }, orderBy: { seq: 'desc' }, select: { seq: true, hash: true } });
    const fields = {
      tenantId: this.tenantId,
      seq: (last?.seq ?? 0) + 1,
      id: randomUUID(),
      actor: this.actor,
      action: entry.action,
      entityType: entry.entityType,
      entityId: entry.entityId,
      at: new Date(),
      before: toJson(entry.before),
      after: toJson(entry.after),
      reason: this.reason,
      prevHash: last?.hash ?? GENESIS_HASH,
      hashVersion: HMAC_SHA256,
    };
    await this.tx.auditRecord.create({
      data: { ...fields, before: fields.before ?? undefined, after: fields.after ?? undefined, hash: auditHash(fields, this.chainKey) } as any,
    });
    this.written++;
  }
}

/** Dates as ISO strings, undefined dropped: the snapshot exactly as jsonb will give it back. */
function toJson(value: unknown): unknown {
  return value === undefined || value === null ? null : JSON.parse(JSON.stringify(value));
}

export interface TenantStoreOptions {
  /**
   * Whether a read runs in one transaction that sets `app.tenant_id` once
   * (PostgreSQL, with a pool of connections). Otherwise (PGlite, one
   * connection) each statement of a read is its own short transaction that
   * sets it, so the connection is never held while a request is between
   * statements. Either way row-level security sees the tenant.
   */
  transactionalReads: boolean;
  /** chainKey(AUDIT_HMAC_KEY), for the audit records of changes. */
  chainKey: Buffer;
}

/**
 * The clinical record's data access for one request: tenant-scoped reads,
 * and for changes a transaction that must write at least one audit record (a
 * change without one is rolled back), so no code path can change data
 * silently.
 */
export class TenantStore implements ReadAccount {
  private client?: TenantClient;
  private perStatement?: TenantClient;
  /** What this request logged as read, and whether it began a change: see ReadAccount. */
  private readonly accessLogged: AccessEntry[] = [];
  private changeBegun = false;

  constructor(
    private readonly prisma: EhrPrisma,
    readonly identity: Identity,
    private readonly options: TenantStoreOptions,
    private readonly requestId?: string,
  ) {}

  get tenantId(): string {
    return this.identity.tenantId;
  }

  private scoped(): TenantClient {
    return (this.client ??= tenantScopedClient(this.prisma, this.identity.tenantId));
  }

  /**
   * Reads through the tenant-scoped client. Without a transaction each
   * statement sees the data committed when it starts, as it would in a
   * READ COMMITTED transaction.
   */
  read<T>(fn: (tx: TenantTx) => Promise<T>): Promise<T> {
    if (!this.options.transactionalReads) return fn((this.perStatement ??= tenantBound(this.scoped(), this.tenantId)));
    return inTenantTransaction(this.scoped(), this.tenantId, fn);
  }

  change<T>(reason: string | null | undefined, fn: (tx: TenantTx, audit: AuditWriter) => Promise<T>): Promise<T> {
    this.changeBegun = true;
    return inTenantTransaction(this.scoped(), this.tenantId, async (tx) => {
      const audit = new AuditWriter(tx, this.tenantId, this.identity.sub, reason ?? null, this.options.chainKey);
      const result = await fn(tx, audit);
      if (audit.written === 0) throw new Error('refusing to commit a change without an audit record');
      return result;
    });
  }

  /**
   * NEN 7513 access logging of patient data reads, awaited before the data is
   * returned; the tenant is this store's own.
   */
  async logAccess(tx: Pick<TenantTx, '$executeRaw'>, entries: AccessEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.insertAccess(tx, entries, [this.requestId ?? null]);
    this.accessLogged.push(...entries);
  }

  get shareable(): boolean {
    return !this.changeBegun;
  }

  logReadsFor(requestIds: readonly string[]): Promise<void> {
    if (this.accessLogged.length === 0 || requestIds.length === 0) return Promise.resolve();
    return this.read((tx) => this.insertAccess(tx, this.accessLogged, requestIds));
  }

  /**
   * One row per entry and request, appended to the tenant's access-log chain
   * (audit/chain.ts) in one fixed statement (arrays unnested) that the database
   * plans once. The head is read and extended under a per-tenant lock, in the
   * caller's transaction or, outside one, in a short transaction of its own.
   */
  private async insertAccess(tx: Pick<TenantTx, '$executeRaw'>, entries: AccessEntry[], requestIds: readonly (string | null)[]): Promise<void> {
    const rows = requestIds.flatMap((requestId) => entries.map((entry) => ({ ...entry, requestId })));
    // A read without a transaction (PGlite) hands its callback the per-statement client; every other client is a transaction's.
    if (tx === this.perStatement) return inTenantTransaction(this.scoped(), this.tenantId, (t) => this.appendAccess(t, rows));
    return this.appendAccess(tx as Pick<TenantTx, '$executeRaw' | '$queryRaw'>, rows);
  }

  private async appendAccess(tx: Pick<TenantTx, '$executeRaw' | '$queryRaw'>, rows: Array<AccessEntry & { requestId: string | null }>): Promise<void> {
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`caregraph-access:${this.tenantId}`}, 0))::text AS locked`;
    const [head] = await tx.$queryRaw<Array<{ seq: number; hash: string }>>`
      SELECT seq, hash FROM "ehr"."LogHead" WHERE "tenantId" = ${this.tenantId} AND log = 'access'`;
    const agent = this.identity.agent;
    // A token acting for someone (RFC 8693 `act`) names who read (actor) and for whom (responsible user).
    const actor = this.identity.actor ?? this.identity.sub;
    const at = new Date();
    let previous = { seq: head?.seq ?? 0, hash: head?.hash ?? GENESIS_HASH };
    const chained = rows.map((entry) => {
      const dataCategory = entry.category ?? CATEGORY_OF[entry.entityType] ?? 'clinical';
      const grounds = readGrounds(this.identity, groundsArea(dataCategory), entry.patientId);
      const fields = {
        tenantId: this.tenantId,
        seq: previous.seq + 1,
        id: randomUUID(),
        actor,
        roles: [...this.identity.roles],
        action: entry.action ?? 'read',
        entityType: entry.entityType,
        entityId: entry.entityId,
        patientId: entry.patientId,
        detail: toJson(entry.detail),
        at,
        requestId: entry.requestId,
        purpose: entry.purpose ?? agent?.purpose ?? impliedPurpose(grounds),
        client: agent?.client ?? null,
        tool: agent?.tool ?? null,
        // No token names a person an agent or integration acts for yet: the actor answers for its own reads.
        responsibleUser: this.identity.sub,
        dataCategory,
        grounds,
        prevHash: previous.hash,
        hashVersion: ACCESS_NEN7513,
      };
      const hash = accessLogHash(fields, this.options.chainKey);
      previous = { seq: fields.seq, hash };
      return { ...fields, hash };
    });
    const column = <K extends keyof (typeof chained)[number]>(key: K) => chained.map((row) => row[key]);
    await tx.$executeRaw`
      INSERT INTO "ehr"."AccessLog" ("tenantId", "seq", "id", "actor", "roles", "action", "entityType", "entityId", "patientId", "requestId", "purpose", "client", "tool",
                                     "responsibleUser", "dataCategory", "grounds", "detail", "at", "prevHash", "hash", "hashVersion")
      SELECT ${this.tenantId}, e.seq, e.id, ${actor}, ${this.identity.roles}::text[], e.action, e."entityType", e."entityId", e."patientId", e."requestId",
             e.purpose, ${agent?.client ?? null}, ${agent?.tool ?? null}, e."responsibleUser", e."dataCategory", e.grounds,
             e.detail::jsonb, ${at.toISOString()}::timestamp, e."prevHash", e.hash, ${ACCESS_NEN7513}
      FROM unnest(${column('seq')}::int[], ${column('id')}::text[], ${column('action')}::text[], ${column('entityType')}::text[],
                  ${column('entityId')}::text[], ${column('patientId')}::text[], ${column('requestId')}::text[],
                  ${column('purpose')}::text[], ${column('responsibleUser')}::text[], ${column('dataCategory')}::text[], ${column('grounds')}::text[],
                  ${chained.map((e) => (e.detail === null ? null : JSON.stringify(e.detail)))}::text[],
                  ${column('prevHash')}::text[], ${column('hash')}::text[])
           AS e(seq, id, action, "entityType", "entityId", "patientId", "requestId", purpose, "responsibleUser", "dataCategory", grounds, detail, "prevHash", hash)
      ORDER BY e.seq`;
  }
}
