import { randomUUID } from 'node:crypto';
import type { Identity } from '../../../common/auth/principal';
import { AppError, notFound, validationError } from '../../../common/errors';
import type { FieldCipher } from '../../../common/crypto';
import type { EventBus } from '../../../common/events/bus';
import type PgBoss from 'pg-boss';
import type { MessageResponseData, PlatformEvent } from '../../../common/events/types';
import { tenantClient } from '../../../common/db/tenant-session';
import type { MessagingPrisma } from '../db/client';
import { latestSmsTo } from '../db/cross-tenant';
import type { InboundMessage, Message as MessageRow } from '../db/generated/client';
import type { ClinicalRecord } from '../clinical-record/client';
import { publishCommitted, recordEvent } from '../events/outbox';
import { APPOINTMENT_REPLY_QUEUE, enqueueInTransaction, type AppointmentReplyJob } from '../delivery/jobs';
import { applyAppointmentReply } from './appointment-reply';
import { changePreferences, type PreferencesView } from '../preferences/preference.service';
import { phoneHash } from '../messages/recipient';
import { helpReply, parseKeyword } from './keywords';
import { parseSettings, type OrganizationSettings } from '../organizations/settings';
import { toPreferencesView } from '../preferences/preference.service';
import { releaseTime } from '../preferences/quiet-hours';
import { announceQueued, queueMessage, type PreparedMessage } from '../messages/message.service';
import { sealJson } from '../sealed';
import type { MessagingMetrics } from '../metrics';
import { actsInAllTenants, assertCan } from '../policy/rules';
import { systemClock, type Clock } from '../../../common/clock';

/**
 * `pending`: a C/X reply whose appointment change the clinical record has not taken yet (retried until it answers).
 * `help`: a help keyword, answered with the automatic help reply (none while the patient has the channel off).
 */
type ReplyOutcome = 'none' | 'confirmed' | 'cancelled' | 'opted_out' | 'opted_in' | 'ignored' | 'pending' | 'help';

/** The template id the automatic help replies are stored under (a built-in text, not a tenant template). */
const HELP_REPLY_TEMPLATE = 'keyword-help';

export interface ReplyResult {
  id: string;
  messageId: string;
  patientId: string;
  keyword: string | null;
  action: ReplyOutcome;
  receivedAt: Date;
}

export interface ReplyServiceDeps {
  /** Not bound to a tenant: the provider's webhook finds its tenant from the conversation. */
  prisma: MessagingPrisma;
  clinical: ClinicalRecord;
  events: EventBus;
  cipher: FieldCipher;
  hashKey: Buffer;
  boss: PgBoss;
  /** Counts the help replies queued, as every send is counted. */
  metrics: MessagingMetrics;
  /** See AppointmentReplyDeps.relay. */
  relayClinicalEvents: () => Promise<unknown>;
  /** When replies are received (default: the system clock). */
  clock?: Clock;
}

/** How long the first, inline attempt has before the reply's job makes the next one. */
const REPLY_JOB_DELAY_MS = 10_000;

const MAX_BODY = 1600;

/** The tenant's settings for reading its reply keywords: a record that no longer validates means none of its own words, never a lost reply. */
function settingsOrDefaults(value: unknown): OrganizationSettings | undefined {
  try {
    return parseSettings(value);
  } catch {
    return undefined;
  }
}

function toResult(row: InboundMessage): ReplyResult {
  return {
    id: row.id,
    messageId: row.messageId,
    patientId: row.patientId,
    keyword: row.keyword,
    action: row.action as ReplyOutcome,
    receivedAt: row.receivedAt,
  };
}

/**
 * Patient replies: records each one (`message.response`), and acts on its
 * keyword (replies/keywords.ts, in the patient's language and English, with the
 * tenant's own words): confirm or cancel the reminded appointment in the
 * clinical record, opt-out/opt-in turn the patient's sms off or on (logged as a
 * preference change with source `keyword`), help queues the automatic help
 * reply, a message like any other.
 */
export class ReplyService {
  constructor(
    private readonly deps: ReplyServiceDeps,
    private readonly identity: Identity,
  ) {}

  /** The simulator's reply to one message (admin). */
  async simulateReply(messageId: string, body: string): Promise<ReplyResult> {
    assertCan(this.identity, 'simulateReply');
    const db = tenantClient(this.deps.prisma, this.identity.tenantId);
    const message = await db.message.findFirst({ where: { tenantId: this.identity.tenantId, id: messageId } });
    if (!message) throw notFound('Message', messageId);
    return this.process(db, message, body, 'simulator', null);
  }

  /**
   * An inbound SMS: the reply belongs to the latest SMS sent to that number
   * (in the caller's tenant; for the provider's own webhook in the tenant of the
   * latest SMS to it in any tenant), automatic help replies left aside.
   */
  async receiveSms(from: string, body: string, providerMessageId: string | null): Promise<ReplyResult> {
    assertCan(this.identity, 'receiveInboundSms');
    const provider = actsInAllTenants(this.identity);
    if (!/^\+?[\d\s().-]{3,32}$/.test(from)) throw validationError("'From' is not a phone number", [{ path: 'From', message: 'expected a phone number' }]);
    const recipientHash = phoneHash(this.deps.hashKey, from);
    const conversation = provider ? await latestSmsTo(this.deps.prisma, recipientHash) : null;
    const tenantId = provider ? conversation?.tenantId : this.identity.tenantId;
    if (!tenantId) throw notFound('Conversation with', from);
    const db = tenantClient(this.deps.prisma, tenantId);
    // The conversation is the latest SMS of the tenant to that number other than an automatic help reply, so that a
    // patient who asked for help and then answers their reminder answers the reminder.
    const message = await db.message.findFirst({
      where: { tenantId, recipientHash, channel: 'sms', templateId: { not: HELP_REPLY_TEMPLATE } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    if (!message) throw notFound('Conversation with', from);
    return this.process(db, message, body, provider ? 'twilio' : 'api', providerMessageId);
  }

  /** The automatic help reply to reply `replyId`, in the patient's language, naming the organisation. */
  private helpMessage(message: MessageRow, replyId: string, preferences: PreferencesView, sender: string, now: Date): PreparedMessage {
    const { cipher } = this.deps;
    const { language, body } = helpReply(preferences.language, sender);
    return {
      id: randomUUID(),
      tenantId: message.tenantId,
      patientId: message.patientId,
      templateId: HELP_REPLY_TEMPLATE,
      templateVersion: 1,
      language,
      channel: message.channel,
      variablesEnc: sealJson(cipher, { sender }),
      subjectEnc: message.channel === 'email' ? cipher.encrypt(sender) : null,
      bodyEnc: cipher.encrypt(body),
      status: 'queued',
      recipientEnc: message.recipientEnc,
      recipientHash: message.recipientHash,
      appointmentId: null,
      // One help reply per reply, however often the reply's transaction is tried.
      idempotencyKey: `reply:${replyId}:help`,
      requestHash: null,
      dueAt: releaseTime(preferences.quietHours, now),
      sendAt: null,
      createdAt: now,
    };
  }

  private async process(prisma: MessagingPrisma, message: MessageRow, body: string, provider: string, providerMessageId: string | null): Promise<ReplyResult> {
    if (body.length > MAX_BODY) throw validationError(`A reply is at most ${MAX_BODY} characters`, [{ path: 'body', message: 'too long' }]);
    if (providerMessageId) {
      const seen = await prisma.inboundMessage.findUnique({
        where: { tenantId_provider_providerMessageId: { tenantId: message.tenantId, provider, providerMessageId } },
      });
      if (seen) return toResult(seen);
    }
    const [preferenceRow, organization] = await Promise.all([
      prisma.communicationPreference.findUnique({ where: { tenantId_patientId: { tenantId: message.tenantId, patientId: message.patientId } } }),
      // Organisations are platform records: the base client.
      this.deps.prisma.organization.findUnique({ where: { id: message.tenantId } }),
    ]);
    const preferences = toPreferencesView(preferenceRow);
    const settings = organization ? settingsOrDefaults(organization.settings) : undefined;
    const parsed = parseKeyword(body, { language: preferences.language, toReminder: message.appointmentId !== null, extra: settings?.replyKeywords });
    let action: ReplyOutcome = 'none';
    let appointmentStatus: AppointmentReplyJob['status'] | undefined;
    if (parsed && (parsed.action === 'confirm' || parsed.action === 'cancel')) {
      // Replies to other messages than an appointment's reminder change nothing.
      if (message.appointmentId) {
        action = 'pending';
        appointmentStatus = parsed.action === 'confirm' ? 'confirmed' : 'cancelled';
      } else action = 'ignored';
    } else if (parsed?.action === 'stop') action = 'opted_out';
    else if (parsed?.action === 'start') action = 'opted_in';
    else if (parsed?.action === 'help') action = 'help';

    const clock = this.deps.clock ?? systemClock;
    const receivedAt = clock.now();
    const { row, events, job, answer } = await prisma.$transaction(async (tx) => {
      const row = await tx.inboundMessage.create({
        data: {
          tenantId: message.tenantId,
          messageId: message.id,
          patientId: message.patientId,
          channel: message.channel,
          bodyEnc: this.deps.cipher.encrypt(body),
          keyword: parsed?.keyword ?? null,
          action,
          provider,
          providerMessageId,
          receivedAt,
        },
      });
      const response: MessageResponseData = {
        messageId: message.id,
        patientId: message.patientId,
        channel: message.channel,
        body,
        receivedAt: receivedAt.toISOString(),
      };
      const events: PlatformEvent<any>[] = [await recordEvent(tx, this.deps.cipher, message.tenantId, 'message.response', response, receivedAt)];
      let job: AppointmentReplyJob | undefined;
      if (appointmentStatus) {
        // The reply and the request to change its appointment commit together; the job retries until the clinical record answers.
        job = { tenantId: message.tenantId, replyId: row.id, appointmentId: message.appointmentId!, status: appointmentStatus };
        await enqueueInTransaction(this.deps.boss, tx, APPOINTMENT_REPLY_QUEUE, job, new Date(receivedAt.getTime() + REPLY_JOB_DELAY_MS), clock);
      }
      if (action === 'opted_out' || action === 'opted_in') {
        await changePreferences(
          tx,
          message.tenantId,
          message.patientId,
          { channels: { sms: action === 'opted_in' } },
          `patient:${message.patientId}`,
          'keyword',
        );
      }
      // The help reply goes back on the conversation's channel to the number or address it came from, unless the
      // patient has that channel off; the delivery worker checks consent and quiet hours as for every message.
      const channel = message.channel as 'sms' | 'email';
      const answer =
        action === 'help' && message.recipientEnc && preferences.channels[channel]
          ? await queueMessage(tx, this.deps.boss, this.helpMessage(message, row.id, preferences, organization?.name ?? message.tenantId, receivedAt), clock)
          : undefined;
      return { row, events, job, answer };
    });
    await publishCommitted(this.deps.events, events);
    if (answer) await announceQueued(this.deps, [answer], receivedAt);
    if (!job) return toResult(row);
    // The first attempt at once; if the clinical record does not answer, the reply stays pending and its job retries.
    try {
      return toResult((await applyAppointmentReply({ prisma, clinical: this.deps.clinical, relay: this.deps.relayClinicalEvents }, job)) ?? row);
    } catch (err) {
      if (err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE') return toResult(row);
      throw err;
    }
  }
}
