import type { Identity } from '../../../common/auth/principal';
import type { FieldCipher } from '../../../common/crypto';
import { parseRetention, retentionPeriods, type RetentionPeriod } from '../../../common/retention';
import type { MessagingPrisma } from '../db/client';
import type { OrganizationService } from '../organizations/organization.service';
import { MESSAGING_RETENTION_CATEGORIES, retentionOverrides } from '../organizations/settings';
import { assertCan } from '../policy/rules';
import { openJson, openText } from '../sealed';

export interface ErasureReport {
  patientId: string;
  messages: number;
  replies: number;
  preferenceChanges: number;
  preferences: number;
  events: number;
  webhookDeliveries: number;
}

/** Events and webhook deliveries are read this many at a time while looking for a patient's. */
const SCAN_BATCH = 500;

/** Whether an event's data (or a delivery's payload `data`) is about the patient or one of their messages. */
function concerns(data: unknown, patientId: string, messageIds: ReadonlySet<string>): boolean {
  if (!data || typeof data !== 'object') return false;
  const { patientId: pid, messageId } = data as { patientId?: unknown; messageId?: unknown };
  return pid === patientId || (typeof messageId === 'string' && messageIds.has(messageId));
}

/**
 * Erasure of a patient's messaging data (GDPR art. 17, docs/privacy.md):
 * messages (bodies, variables, recipient), their status history, replies,
 * preferences and their history, and the outbox events and webhook deliveries
 * (with their attempts) about them are deleted, ciphertext included; nothing
 * of the patient stays in messaging's tables. Also the tenant's messaging retention periods (kept in its organisation's settings).
 */
export class MessagingPrivacyService {
  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly identity: Identity,
    private readonly cipher: FieldCipher,
    private readonly organizations: OrganizationService,
  ) {}

  async erasePatient(patientId: string): Promise<ErasureReport> {
    assertCan(this.identity, 'erasePatientData');
    const messageIds = new Set((await this.prisma.message.findMany({ where: { patientId }, select: { id: true } })).map((m) => m.id));
    // Event data and delivery payloads are ciphertext: find the patient's by opening them, a batch at a time.
    const eventIds = await this.scan(
      (cursor) =>
        this.prisma.event.findMany({
          where: cursor ? { id: { gt: cursor } } : {},
          orderBy: { id: 'asc' },
          take: SCAN_BATCH,
          select: { id: true, data: true, dataEnc: true },
        }),
      (e) => concerns(openJson(this.cipher, e.dataEnc, e.data), patientId, messageIds),
    );
    const deliveryIds = await this.scan(
      (cursor) =>
        this.prisma.webhookDelivery.findMany({
          where: cursor ? { id: { gt: cursor } } : {},
          orderBy: { id: 'asc' },
          take: SCAN_BATCH,
          select: { id: true, eventId: true, payload: true, payloadEnc: true },
        }),
      (d) =>
        eventIds.includes(d.eventId) ||
        concerns((JSON.parse(openText(this.cipher, d.payloadEnc, d.payload) ?? '{}') as { data?: unknown }).data, patientId, messageIds),
    );
    const ids = [...messageIds];
    return this.prisma.$transaction(async (tx) => {
      const webhookDeliveries = (await tx.webhookDelivery.deleteMany({ where: { id: { in: deliveryIds } } })).count;
      const events = (await tx.event.deleteMany({ where: { id: { in: eventIds } } })).count;
      await tx.messageStatusChange.deleteMany({ where: { messageId: { in: ids } } });
      const replies = (await tx.inboundMessage.deleteMany({ where: { OR: [{ patientId }, { messageId: { in: ids } }] } })).count;
      const messages = (await tx.message.deleteMany({ where: { OR: [{ patientId }, { id: { in: ids } }] } })).count;
      const preferenceChanges = (await tx.preferenceChange.deleteMany({ where: { patientId } })).count;
      const preferences = (await tx.communicationPreference.deleteMany({ where: { patientId } })).count;
      // Export archives hold copies of all of the above; their request and download records stay (patient id only).
      const exportIds = (await tx.patientExport.findMany({ where: { patientId }, select: { id: true } })).map((e) => e.id);
      await tx.patientExportChunk.deleteMany({ where: { exportId: { in: exportIds } } });
      await tx.patientExport.deleteMany({ where: { id: { in: exportIds } } });
      return { patientId, messages, replies, preferenceChanges, preferences, events, webhookDeliveries };
    });
  }

  private async scan<T extends { id: string }>(page: (cursor: string | undefined) => Promise<T[]>, match: (row: T) => boolean): Promise<string[]> {
    const found: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const rows = await page(cursor);
      for (const row of rows) if (match(row)) found.push(row.id);
      if (rows.length < SCAN_BATCH) return found;
      cursor = rows[rows.length - 1].id;
    }
  }

  /** The tenant's periods in force; its own are part of its organisation's settings (`retention`). */
  async retention(): Promise<RetentionPeriod[]> {
    return retentionPeriods(MESSAGING_RETENTION_CATEGORIES, retentionOverrides(await this.organizations.ownSettings('manageRetention')));
  }

  /** Sets one period in the organisation's settings, logged as an organisation change. */
  async setRetention(category: string, days: number, reason?: string | null): Promise<RetentionPeriod[]> {
    const settings = await this.organizations.updateOwnSettings(
      'manageRetention',
      (current) => ({ ...current, retention: { ...current.retention, [parseRetention(category, days, MESSAGING_RETENTION_CATEGORIES)]: days } }),
      reason,
    );
    return retentionPeriods(MESSAGING_RETENTION_CATEGORIES, retentionOverrides(settings));
  }
}
