import type { Identity } from '../../../common/auth/principal';
import { hasRole } from '../../../common/auth/principal';
import { AppError, forbidden, notFound, validationError } from '../../../common/errors';
import type { EventBus } from '../../../common/events/bus';
import type { AppointmentEventData, MessageResponseData, PlatformEvent } from '../../../common/events/types';
import type { MessagingPrisma } from '../db/client';
import type { InboundMessage, Message as MessageRow } from '../db/generated/client';
import type { ClinicalRecord } from '../clinical-record/client';
import { publishCommitted, recordEvent } from '../events/outbox';
import { changePreferences } from '../preferences/preference.service';
import { phoneHash } from '../messages/recipient';
import { parseKeyword } from './keywords';
import { isProviderIdentity } from './provider-identity';

export type ReplyOutcome = 'none' | 'confirmed' | 'cancelled' | 'opted_out' | 'opted_in' | 'ignored';

export interface ReplyResult {
  id: string;
  messageId: string;
  patientId: string;
  keyword: string | null;
  action: ReplyOutcome;
  receivedAt: Date;
}

export interface ReplyServiceDeps {
  prisma: MessagingPrisma;
  clinical: ClinicalRecord;
  events: EventBus;
  hashKey: Buffer;
}

const MAX_BODY = 1600;

function toResult(row: InboundMessage): ReplyResult {
  return { id: row.id, messageId: row.messageId, patientId: row.patientId, keyword: row.keyword, action: row.action as ReplyOutcome, receivedAt: row.receivedAt };
}

/**
 * Patient replies: records each one (`message.response`), and acts on the
 * keywords of CONTRACT §5: confirm or cancel the reminded appointment in the
 * clinical record, STOP/START the patient's SMS consent (logged as a
 * preference change with source `keyword`).
 */
export class ReplyService {
  constructor(
    private readonly deps: ReplyServiceDeps,
    private readonly identity: Identity,
  ) {}

  /** The simulator's reply to one message (admin). */
  async simulateReply(messageId: string, body: string): Promise<ReplyResult> {
    if (!hasRole(this.identity, 'admin')) throw forbidden('Only admins may inject simulated replies');
    const message = await this.deps.prisma.message.findFirst({ where: { tenantId: this.identity.tenantId, id: messageId } });
    if (!message) throw notFound('Message', messageId);
    return this.process(message, body, 'simulator', null);
  }

  /**
   * An inbound SMS: the reply belongs to the latest SMS sent to that number
   * (in the caller's tenant; in any tenant for the provider's own webhook).
   */
  async receiveSms(from: string, body: string, providerMessageId: string | null): Promise<ReplyResult> {
    const provider = isProviderIdentity(this.identity);
    if (!provider && !hasRole(this.identity, 'admin', 'integration')) throw forbidden('Only the SMS provider, admins and integrations may post inbound SMS');
    if (!/^\+?[\d\s().-]{3,32}$/.test(from)) throw validationError("'From' is not a phone number", [{ path: 'From', message: 'expected a phone number' }]);
    const message = await this.deps.prisma.message.findFirst({
      where: { recipientHash: phoneHash(this.deps.hashKey, from), channel: 'sms', ...(provider ? {} : { tenantId: this.identity.tenantId }) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    if (!message) throw notFound('Conversation with', from);
    return this.process(message, body, provider ? 'twilio' : 'api', providerMessageId);
  }

  private async process(message: MessageRow, body: string, provider: string, providerMessageId: string | null): Promise<ReplyResult> {
    if (body.length > MAX_BODY) throw validationError(`A reply is at most ${MAX_BODY} characters`, [{ path: 'body', message: 'too long' }]);
    const { prisma } = this.deps;
    if (providerMessageId) {
      const seen = await prisma.inboundMessage.findUnique({ where: { provider_providerMessageId: { provider, providerMessageId } } });
      if (seen) return toResult(seen);
    }
    const parsed = parseKeyword(body);
    let action: ReplyOutcome = 'none';
    let appointmentEvent: AppointmentEventData | undefined;
    if (parsed && (parsed.action === 'confirm' || parsed.action === 'cancel')) {
      ({ action, event: appointmentEvent } = await this.changeAppointment(message, parsed.action === 'confirm' ? 'confirmed' : 'cancelled'));
    } else if (parsed?.action === 'stop') action = 'opted_out';
    else if (parsed?.action === 'start') action = 'opted_in';

    const receivedAt = new Date();
    const { row, events } = await prisma.$transaction(async (tx) => {
      const row = await tx.inboundMessage.create({
        data: { tenantId: message.tenantId, messageId: message.id, patientId: message.patientId, channel: message.channel, body, keyword: parsed?.keyword ?? null, action, provider, providerMessageId, receivedAt },
      });
      const response: MessageResponseData = { messageId: message.id, patientId: message.patientId, channel: message.channel, body, receivedAt: receivedAt.toISOString() };
      const events: PlatformEvent<any>[] = [await recordEvent(tx, message.tenantId, 'message.response', response, receivedAt)];
      if (appointmentEvent) {
        events.push(await recordEvent(tx, message.tenantId, action === 'confirmed' ? 'appointment.confirmed' : 'appointment.cancelled', appointmentEvent, receivedAt));
      }
      if (action === 'opted_out' || action === 'opted_in') {
        await changePreferences(tx, message.tenantId, message.patientId, { channels: { sms: action === 'opted_in' } }, `patient:${message.patientId}`, 'keyword');
      }
      return { row, events };
    });
    await publishCommitted(this.deps.events, events);
    return toResult(row);
  }

  /** Confirms or cancels the appointment a reminder was about; replies to other messages change nothing. */
  private async changeAppointment(message: MessageRow, status: 'confirmed' | 'cancelled'): Promise<{ action: ReplyOutcome; event?: AppointmentEventData }> {
    if (!message.appointmentId) return { action: 'ignored' };
    const { clinical } = this.deps;
    const appointment = await clinical.appointment(message.tenantId, message.appointmentId);
    if (!appointment || appointment.status === status) return { action: 'ignored' };
    try {
      const updated = await clinical.updateAppointmentStatus(message.tenantId, message.appointmentId, status);
      return { action: status, event: { appointmentId: updated.id, patientId: updated.patientId, status: updated.status, start: new Date(updated.start).toISOString() } };
    } catch (err) {
      if (err instanceof AppError && (err.code === 'CONFLICT' || err.code === 'NOT_FOUND')) return { action: 'ignored' };
      throw err;
    }
  }
}
