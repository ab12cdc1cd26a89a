import type PgBoss from 'pg-boss';
import { systemClock, type Clock } from '../../../common/clock';
import { ensureQueue, workQueue } from '../../../common/db/boss';
import { tenantClient } from '../../../common/db/tenant-session';
import type { Logger } from '../../../common/logger';
import { retentionCutoff, retentionDays } from '../../../common/retention';
import type { ClinicalRecord } from '../clinical-record/client';
import type { MessagingPrisma } from '../db/client';
import { parseSettings, retentionOverrides } from '../organizations/settings';

export const MESSAGING_PURGE_QUEUE = 'messaging-retention-purge';
const MESSAGING_PURGE_CRON = '47 3 * * *';
/** Messages in these statuses are finished; a queued or sending message is never purged, whatever its age. */
const FINAL_STATUSES = ['sent', 'delivered', 'failed'];
const BATCH = 500;

export interface MessagingPurgeReport {
  tenantId: string;
  messages: number;
  /** Patients under legal hold, whose messages were kept whatever their age. */
  heldPatients: number;
  webhookDeliveries: number;
  /** Subject access archives past their expiry (their job rows and audit stay). */
  exportArchives: number;
}

/**
 * Per-tenant retention of messaging data (docs/privacy.md; the periods are part
 * of the organisation's settings): finished messages
 * older than the tenant's `messages` period go with their status history and
 * replies, except those of patients under legal hold (as the clinical record
 * keeps theirs); finished webhook deliveries older than its `webhook_deliveries`
 * period go with their attempts. Runs in each tenant with that tenant set.
 */
export class MessagingRetention {
  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly clinical: Pick<ClinicalRecord, 'legalHolds'>,
    private readonly clock: Clock = systemClock,
  ) {}

  async purge(now = this.clock.now()): Promise<MessagingPurgeReport[]> {
    const tenants = await this.prisma.$queryRaw<Array<{ t: string }>>`SELECT t FROM messaging.tenants_with_retained_data() AS t`;
    const reports: MessagingPurgeReport[] = [];
    for (const { t } of tenants) reports.push(await this.purgeTenant(t, now));
    return reports;
  }

  async purgeTenant(tenantId: string, now: Date): Promise<MessagingPurgeReport> {
    const prisma = tenantClient(this.prisma, tenantId);
    const organization = await this.prisma.organization.findUnique({ where: { id: tenantId }, select: { settings: true } });
    const overrides = organization ? retentionOverrides(parseSettings(organization.settings)) : [];
    const messagesBefore = retentionCutoff(now, retentionDays('messages', overrides));
    const deliveriesBefore = retentionCutoff(now, retentionDays('webhook_deliveries', overrides));
    // The clinical record owns legal holds; when it cannot answer, the run fails and is retried rather than purge held data.
    const held = await this.clinical.legalHolds(tenantId);
    let messages = 0;
    for (;;) {
      const due = await prisma.message.findMany({
        where: { createdAt: { lt: messagesBefore }, status: { in: FINAL_STATUSES }, patientId: { notIn: held } },
        select: { id: true },
        take: BATCH,
      });
      if (due.length === 0) break;
      const ids = due.map((m) => m.id);
      messages += await prisma.$transaction(async (tx) => {
        await tx.messageStatusChange.deleteMany({ where: { messageId: { in: ids } } });
        await tx.inboundMessage.deleteMany({ where: { messageId: { in: ids } } });
        return (await tx.message.deleteMany({ where: { id: { in: ids } } })).count;
      });
      if (due.length < BATCH) break;
    }
    const webhookDeliveries = (await prisma.webhookDelivery.deleteMany({ where: { createdAt: { lt: deliveriesBefore }, status: { not: 'pending' } } })).count;
    const expired = await prisma.patientExport.findMany({ where: { expiresAt: { lt: now }, status: 'done' }, select: { id: true } });
    const exportIds = expired.map((e) => e.id);
    await prisma.patientExportChunk.deleteMany({ where: { exportId: { in: exportIds } } });
    const exportArchives = (await prisma.patientExport.updateMany({ where: { id: { in: exportIds } }, data: { status: 'expired' } })).count;
    return { tenantId, messages, heldPatients: held.length, webhookDeliveries, exportArchives };
  }
}

/** Runs the purge daily through the job queue (pg-boss's schedule survives restarts; one worker takes each run). */
export async function scheduleMessagingPurge(boss: PgBoss, retention: MessagingRetention, logger: Logger): Promise<{ close(): Promise<void> }> {
  await ensureQueue(boss, { name: MESSAGING_PURGE_QUEUE, retryLimit: 3, retryDelay: 60, expireInSeconds: 3600 });
  await boss.schedule(MESSAGING_PURGE_QUEUE, MESSAGING_PURGE_CRON, {}, { tz: 'UTC' });
  return workQueue(boss, MESSAGING_PURGE_QUEUE, { pollingIntervalSeconds: 1 }, async () => {
    for (const report of await retention.purge()) {
      if (report.messages || report.webhookDeliveries || report.exportArchives) logger.info(report, 'messaging retention: expired data deleted');
    }
  });
}
