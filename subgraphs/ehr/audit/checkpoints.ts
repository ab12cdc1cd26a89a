import { systemClock, type Clock, type ClockTimer } from '../../../common/clock';
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { tenantBound } from '../../../common/db/tenant-session';
import type { Logger } from '../../../common/logger';
import type { EhrPrisma } from '../db/client';
import { canonicalJson } from './chain';
import type { EhrMetrics } from '../metrics';

/**
 * Signed checkpoints of the audit chains, kept outside the database: every
 * interval, each tenant whose chain head moved gets one line in an append-only
 * file (and the same line in the log) with its last seq, that record's hash,
 * the time, and an HMAC over them with a key derived from AUDIT_HMAC_KEY.
 * Someone who can rewrite the database can neither forge a line nor move the
 * file's past lines along with the table, so `verifyAuditChain` detects a
 * rewritten, truncated or replaced chain against them.
 */
export interface Checkpoint {
  tenantId: string;
  /** The access log's chain; absent: the audit trail's. */
  log?: 'access';
  seq: number;
  hash: string;
  at: string;
}

/** Which chain a checkpoint seals. */
type ChainLog = 'audit' | 'access';

export interface SignedCheckpoint extends Checkpoint {
  sig: string;
}

function checkpointKey(auditKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', auditKey, 'caregraph', 'audit-checkpoint-v1', 32));
}

function signature(key: Buffer, cp: Checkpoint): string {
  return createHmac('sha256', key)
    .update(canonicalJson({ tenantId: cp.tenantId, log: cp.log, seq: cp.seq, hash: cp.hash, at: cp.at }))
    .digest('hex');
}

export interface TenantCheckpoints {
  /** Valid checkpoints of the tenant, in file order. */
  checkpoints: Checkpoint[];
  /** Lines of this tenant (or unreadable lines) whose signature does not verify. */
  forged: number[];
}

/** The checkpoint file: appends signed lines, reads and checks them back. */
export class CheckpointLog {
  private readonly key: Buffer;

  constructor(
    readonly path: string,
    auditKey: Buffer,
  ) {
    this.key = checkpointKey(auditKey);
  }

  append(checkpoints: Checkpoint[]): SignedCheckpoint[] {
    if (checkpoints.length === 0) return [];
    const signed = checkpoints.map((cp) => ({ ...cp, sig: signature(this.key, cp) }));
    mkdirSync(dirname(this.path), { recursive: true });
    appendFileSync(this.path, signed.map((cp) => `${JSON.stringify(cp)}\n`).join(''), { mode: 0o600 });
    return signed;
  }

  /** All valid checkpoints of one chain by tenant, and the numbers of lines that do not verify (unparsable ones count for every tenant). */
  readAll(log: ChainLog = 'audit'): { byTenant: Map<string, Checkpoint[]>; forged: Map<string | null, number[]> } {
    const byTenant = new Map<string, Checkpoint[]>();
    const forged = new Map<string | null, number[]>();
    if (!existsSync(this.path)) return { byTenant, forged };
    const lines = readFileSync(this.path, 'utf8').split('\n');
    lines.forEach((line, index) => {
      if (!line.trim()) return;
      let cp: SignedCheckpoint | undefined;
      try {
        cp = JSON.parse(line) as SignedCheckpoint;
      } catch {
        cp = undefined;
      }
      const valid =
        cp &&
        typeof cp.tenantId === 'string' &&
        (cp.log === undefined || cp.log === 'access') &&
        Number.isInteger(cp.seq) &&
        typeof cp.hash === 'string' &&
        typeof cp.at === 'string' &&
        typeof cp.sig === 'string' &&
        cp.sig.length === 64 &&
        timingSafeEqual(Buffer.from(cp.sig, 'hex'), Buffer.from(signature(this.key, cp), 'hex'));
      if (!valid) {
        const tenant = cp && typeof cp.tenantId === 'string' ? cp.tenantId : null;
        forged.set(tenant, [...(forged.get(tenant) ?? []), index + 1]);
        return;
      }
      if ((cp!.log ?? 'audit') !== log) return;
      const list = byTenant.get(cp!.tenantId) ?? [];
      list.push({ tenantId: cp!.tenantId, ...(cp!.log ? { log: cp!.log } : {}), seq: cp!.seq, hash: cp!.hash, at: cp!.at });
      byTenant.set(cp!.tenantId, list);
    });
    return { byTenant, forged };
  }

  forTenant(tenantId: string, log: ChainLog = 'audit'): TenantCheckpoints {
    const { byTenant, forged } = this.readAll(log);
    return { checkpoints: byTenant.get(tenantId) ?? [], forged: [...(forged.get(tenantId) ?? []), ...(forged.get(null) ?? [])].sort((a, b) => a - b) };
  }
}

/**
 * Writes a checkpoint of every tenant whose chain head moved since its last
 * one. A head that no longer matches the last checkpoint (fewer records, or
 * another hash at its seq) is not signed: that is the tampering the
 * checkpoints exist to reveal, logged as an error instead.
 */
export class AuditCheckpointer {
  private timer: ClockTimer | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly prisma: EhrPrisma,
    private readonly log: CheckpointLog,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly metrics: EhrMetrics,
    private readonly clock: Clock = systemClock,
  ) {}

  async checkpoint(now = this.clock.now()): Promise<SignedCheckpoint[]> {
    // Every tenant's heads through the owner's functions: row-level security shows the runtime role no row without a tenant.
    const audit = await this.prisma.$queryRaw<Array<{ tenantId: string; seq: number; hash: string }>>`
      SELECT "tenantId", seq, hash FROM ehr.audit_chain_heads()`;
    const access = await this.prisma.$queryRaw<Array<{ tenantId: string; seq: number; hash: string }>>`
      SELECT "tenantId", seq, hash FROM ehr.access_log_heads()`;
    const due = [...(await this.due('audit', audit, now)), ...(await this.due('access', access, now))];
    const signed = this.log.append(due);
    for (const cp of signed) this.logger.info({ auditCheckpoint: cp }, 'audit chain checkpoint');
    return signed;
  }

  private async purgedAccessUpTo(tenantId: string, seq: number): Promise<boolean> {
    const purge = await tenantBound(this.prisma, tenantId).auditRecord.findFirst({
      where: { tenantId, action: 'purge', entityType: 'AccessLog' },
      orderBy: { seq: 'desc' },
      select: { after: true },
    });
    return ((purge?.after as { upToSeq?: number } | null)?.upToSeq ?? 0) >= seq;
  }

  private async due(log: ChainLog, heads: Array<{ tenantId: string; seq: number; hash: string }>, now: Date): Promise<Checkpoint[]> {
    const { byTenant } = this.log.readAll(log);
    const due: Checkpoint[] = [];
    for (const head of heads) {
      const last = byTenant.get(head.tenantId)?.at(-1);
      if (last && last.seq === head.seq && last.hash === head.hash) continue;
      if (last) {
        const bound = tenantBound(this.prisma, head.tenantId);
        const records = log === 'audit' ? bound.auditRecord : bound.accessLog;
        const at = (seq: number) =>
          (records as typeof bound.auditRecord).findUnique({
            where: { tenantId_seq: { tenantId: head.tenantId, seq } },
            select: { hash: true, prevHash: true },
          });
        const atLast = await at(last.seq);
        // A retention purge (privacy/retention.ts) may have removed the checkpointed record: the audit trail must then
        // continue from it; the access log's purge, which keeps a held patient's entries, must name it in its keyed record.
        const matches = atLast
          ? atLast.hash === last.hash
          : log === 'audit'
            ? (await at(last.seq + 1))?.prevHash === last.hash
            : await this.purgedAccessUpTo(head.tenantId, last.seq);
        if (!matches) {
          this.logger.error(
            { tenantId: head.tenantId, log, checkpoint: last, head },
            'audit chain no longer matches its last signed checkpoint; not signing it',
          );
          continue;
        }
      }
      due.push({ tenantId: head.tenantId, ...(log === 'access' ? { log } : {}), seq: head.seq, hash: head.hash, at: now.toISOString() });
    }
    return due;
  }

  private run(): Promise<void> {
    this.running ??= this.checkpoint()
      .then(
        (signed) => this.metrics.checkpointPass(signed.length, new Date()),
        (err) => {
          this.metrics.checkpointFailed();
          this.logger.error({ err }, 'audit checkpoint failed');
        },
      )
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** Seals the chains as they are now (legacy records included), then checkpoints every interval. */
  async start(): Promise<void> {
    await this.run();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => {
      void this.run();
      this.schedule();
    }, this.intervalMs);
  }

  /** A last checkpoint on the way down, so the changes since the previous one are covered. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    await this.running;
    await this.run();
  }
}
