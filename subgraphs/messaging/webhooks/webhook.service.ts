import { randomBytes } from 'node:crypto';
import type PgBoss from 'pg-boss';
import { z } from 'zod';
import type { Clock } from '../../../common/clock';
import type { Identity } from '../../../common/auth/principal';
import type { FieldCipher } from '../../../common/crypto';
import { AppError, notFound, validationError, zodDetails, type ErrorDetail } from '../../../common/errors';
import { WEBHOOK_EVENT_TYPES, webhookBody, type WebhookEventType } from '../../../common/events/types';
import type { MessagingPrisma } from '../db/client';
import type { WebhookSubscription } from '../db/generated/client';
import { newId, type WebhookEngine } from './engine';
import { WHSEC_PREFIX } from './sender';
import { checkWebhookUrl } from './ssrf';
import type { WebhookHealth } from './webhook.types';
import { validatePage } from '../messages/message.service';
import { openText } from '../sealed';
import { assertAllowed, assertCan, type Action } from '../policy/rules';
import { enqueueInTransaction } from '../delivery/jobs';
import { recoveryView, WEBHOOK_RECOVERY_QUEUE, type WebhookRecoveryJob, type WebhookRecoveryView } from './recovery';

export interface WebhookServiceDeps {
  cipher: FieldCipher;
  allowInsecure: boolean;
  engine: WebhookEngine;
  /** WEBHOOK_SECRET_OVERLAP: how long a rotated-out secret keeps signing beside the new one (ms). */
  secretOverlapMs: number;
  /** The time a rotation's overlap and a recovery's window are counted from (the delivery engine's clock). */
  clock: Clock;
  /** Recoveries are worked on it (recovery.ts). */
  boss: PgBoss;
  /** WEBHOOK_RETENTION_DAYS: a recovery may reach no further back, since older events are purged. */
  retentionDays: number;
}

const events = z
  .array(z.string())
  .min(1, 'must name at least one event type')
  .superRefine((list, ctx) => {
    list.forEach((type, index) => {
      if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) {
        ctx.addIssue({ code: 'custom', path: [index], message: `unknown event type '${type}' (known: ${WEBHOOK_EVENT_TYPES.join(', ')})` });
      }
    });
  });
const url = z.string().min(1, 'is required').max(2048, 'must be at most 2048 characters');
/** Bytes of a secret the server generates (`whsec_` + base64). */
const GENERATED_SECRET_BYTES = 32;
const secret = z
  .string()
  .min(16, 'must be at least 16 characters')
  .max(1024, 'must be at most 1024 characters')
  .refine((value) => {
    // A `whsec_` secret is keyed with its base64 decoding (Standard Webhooks): it must decode, strictly, to 16 bytes or more.
    if (!value.startsWith(WHSEC_PREFIX)) return true;
    const encoded = value.slice(WHSEC_PREFIX.length);
    const key = Buffer.from(encoded, 'base64');
    return key.length >= 16 && key.toString('base64') === encoded;
  }, `after the ${WHSEC_PREFIX} prefix must come the base64 of at least 16 bytes`);
const ordering = z.enum(['parallel', 'fifo']);
const rateLimit = z.number().int('must be a whole number').min(1, 'must be at least 1').max(10_000, 'must be at most 10000');
const createSchema = z.object({ url, events, secret: secret.optional(), ordering: ordering.optional(), rateLimit: rateLimit.optional() });
const updateSchema = z.object({
  url: url.optional(),
  events: events.optional(),
  secret: secret.optional(),
  status: z.enum(['active', 'disabled']).optional(),
  ordering: ordering.optional(),
  // null removes the limit.
  rateLimit: rateLimit.nullable().optional(),
});
const instant = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with an offset' });
const recoverSchema = z.object({ since: instant, until: instant.optional(), all: z.boolean().optional() });
const DAY_MS = 86_400_000;
const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled'];

export type WebhookView = Omit<WebhookSubscription, 'secret' | 'previousSecret' | 'previousUntil' | 'tenantId'>;

function view(row: WebhookSubscription): WebhookView {
  const { secret: _secret, previousSecret: _previous, previousUntil: _until, tenantId: _tenant, ...rest } = row;
  return rest;
}

/** A secret for a subscription created without one: `whsec_` + base64 of 32 random bytes. */
function generateSecret(): string {
  return WHSEC_PREFIX + randomBytes(GENERATED_SECRET_BYTES).toString('base64');
}

/** Example data of each event type for test events; ids start with `test_` so receivers can tell them apart. */
function sampleData(type: WebhookEventType, now: Date): Record<string, unknown> {
  const message = { messageId: 'test_message', patientId: 'test_patient', channel: 'sms' };
  switch (type) {
    case 'message.sent':
      return { ...message, status: 'sent' };
    case 'message.delivered':
      return { ...message, status: 'delivered' };
    case 'message.failed':
      return { ...message, status: 'failed', error: 'test failure' };
    case 'message.cancelled':
      return { ...message, status: 'cancelled' };
    case 'message.response':
      return { ...message, body: 'YES', receivedAt: now.toISOString() };
    case 'appointment.booked':
    case 'appointment.rescheduled':
    case 'appointment.confirmed':
    case 'appointment.cancelled': {
      const start = new Date(now.getTime() + 86_400_000);
      return {
        appointmentId: 'test_appointment',
        patientId: 'test_patient',
        status: type === 'appointment.confirmed' ? 'confirmed' : type === 'appointment.cancelled' ? 'cancelled' : 'booked',
        start: start.toISOString(),
        end: new Date(start.getTime() + 1_800_000).toISOString(),
        ...(type === 'appointment.rescheduled' ? { previousStart: new Date(start.getTime() - 3_600_000).toISOString() } : {}),
      };
    }
  }
}

/** Webhook subscriptions of the caller's tenant (docs/api.md §6). Managed by admins and integrations. */
export class WebhookService {
  /** One health read per subscription and request, however many of its fields are selected. */
  private readonly healthCache = new Map<string, Promise<WebhookHealth>>();

  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly identity: Identity,
    private readonly deps: WebhookServiceDeps,
  ) {}

  private requireManager(action: Action): void {
    assertAllowed(this.identity, action, 'webhook');
  }

  private async find(id: string, action: Action = 'read'): Promise<WebhookSubscription> {
    this.requireManager(action);
    const row = await this.prisma.webhookSubscription.findFirst({ where: { tenantId: this.identity.tenantId, id } });
    if (!row) throw notFound('Webhook', id);
    return row;
  }

  /** The URL to store (normalised), or undefined with the problem added to `details`. */
  private async checkUrl(value: string, details: ErrorDetail[]): Promise<string | undefined> {
    const checked = await checkWebhookUrl(value, { allowInsecure: this.deps.allowInsecure });
    if (checked.problem !== undefined) details.push({ path: 'url', message: checked.problem });
    return checked.href;
  }

  async list(): Promise<WebhookView[]> {
    this.requireManager('read');
    const rows = await this.prisma.webhookSubscription.findMany({
      where: { tenantId: this.identity.tenantId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return rows.map(view);
  }

  /** Failure streak and latest failure of a subscription the caller has already read. */
  health(id: string): Promise<WebhookHealth> {
    let health = this.healthCache.get(id);
    if (!health) {
      health = this.readHealth(id);
      this.healthCache.set(id, health);
    }
    return health;
  }

  private async readHealth(id: string): Promise<WebhookHealth> {
    this.requireManager('read');
    return webhookHealth(this.prisma, this.identity.tenantId, id);
  }

  async get(id: string): Promise<WebhookView> {
    return view(await this.find(id));
  }

  /** Creates a subscription; without a `secret` one is generated and returned, this once, as `secret`. */
  async create(input: unknown): Promise<WebhookView & { secret?: string }> {
    this.requireManager('write');
    const parsed = createSchema.safeParse(input);
    if (!parsed.success) throw validationError('Invalid webhook subscription', zodDetails(parsed.error.issues));
    const details: ErrorDetail[] = [];
    const url = await this.checkUrl(parsed.data.url, details);
    if (!url) throw validationError('Invalid webhook subscription', details);
    const generated = parsed.data.secret === undefined ? generateSecret() : undefined;
    const row = await this.prisma.webhookSubscription.create({
      data: {
        tenantId: this.identity.tenantId,
        id: newId('wh'),
        url,
        events: [...new Set(parsed.data.events)],
        secret: this.deps.cipher.encrypt(parsed.data.secret ?? generated!),
        status: 'active',
        ordering: parsed.data.ordering ?? 'parallel',
        rateLimit: parsed.data.rateLimit ?? null,
      },
    });
    return generated === undefined ? view(row) : { ...view(row), secret: generated };
  }

  /**
   * Changes url/events/secret; `status: active` re-enables a disabled subscription (admin only), `disabled` pauses it.
   * A new secret signs at once; the one it replaces keeps signing beside it for WEBHOOK_SECRET_OVERLAP.
   */
  async update(id: string, input: unknown): Promise<WebhookView> {
    const current = await this.find(id, 'write');
    const parsed = updateSchema.safeParse(input);
    if (!parsed.success) throw validationError('Invalid webhook change', zodDetails(parsed.error.issues));
    const change = parsed.data;
    if (Object.values(change).every((v) => v === undefined))
      throw validationError('Nothing to change: give url, events, secret, status, ordering or rateLimit');
    const details: ErrorDetail[] = [];
    const url = change.url === undefined || change.url === current.url ? undefined : await this.checkUrl(change.url, details);
    if (details.length > 0) throw validationError('Invalid webhook change', details);
    if (change.status === 'active' && current.status !== 'active') assertCan(this.identity, 'reEnableWebhook');
    const statusChange =
      change.status === undefined || change.status === current.status
        ? {}
        : change.status === 'active'
          ? { status: 'active', disabledAt: null, disabledReason: null }
          : { status: 'disabled', disabledAt: new Date(), disabledReason: `disabled by ${this.identity.sub}` };
    const row = await this.prisma.$transaction(async (tx) => {
      const updated = await tx.webhookSubscription.update({
        where: { id: current.id },
        data: {
          ...(url !== undefined ? { url } : {}),
          ...(change.events !== undefined ? { events: [...new Set(change.events)] } : {}),
          ...(change.secret !== undefined ? this.rotation(current, change.secret) : {}),
          ...(change.ordering !== undefined ? { ordering: change.ordering } : {}),
          ...(change.rateLimit !== undefined ? { rateLimit: change.rateLimit } : {}),
          ...statusChange,
        },
      });
      // A paused subscription's pending deliveries stop, as for an automatic disable.
      if (statusChange.status === 'disabled') {
        await tx.webhookDelivery.updateMany({ where: { subscriptionId: current.id, status: 'pending' }, data: { status: 'cancelled', nextAttemptAt: null } });
      }
      return updated;
    });
    return view(row);
  }

  /**
   * The columns a new secret changes: it becomes the current one and the current one the previous, signing until
   * the overlap ends (it replaces an earlier previous secret still in its overlap). The same secret again changes nothing.
   */
  private rotation(current: WebhookSubscription, next: string): Partial<Pick<WebhookSubscription, 'secret' | 'previousSecret' | 'previousUntil'>> {
    const { cipher, secretOverlapMs, clock } = this.deps;
    if (cipher.decrypt(current.secret) === next) return {};
    const overlap = secretOverlapMs > 0;
    return {
      secret: cipher.encrypt(next),
      // Already sealed with the encryption key: kept as it is.
      previousSecret: overlap ? current.secret : null,
      previousUntil: overlap ? new Date(clock.now().getTime() + secretOverlapMs) : null,
    };
  }

  async remove(id: string): Promise<string> {
    const current = await this.find(id, 'write');
    // Deliveries and their attempts go with it (cascade); alerts stay.
    await this.prisma.webhookSubscription.delete({ where: { id: current.id } });
    return current.id;
  }

  async deliveries(id: string, request: { limit?: number | null; offset?: number | null; status?: string | null }) {
    const sub = await this.find(id);
    const { limit, offset } = validatePage(request.limit, request.offset);
    if (request.status && !DELIVERY_STATUSES.includes(request.status)) {
      throw validationError('Invalid delivery status', [{ path: 'status', message: `must be one of ${DELIVERY_STATUSES.join(', ')}` }]);
    }
    const where = { subscriptionId: sub.id, ...(request.status ? { status: request.status } : {}) };
    const [rows, total] = await Promise.all([
      this.prisma.webhookDelivery.findMany({
        where,
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: limit,
        skip: offset,
        include: { attemptLog: { orderBy: [{ attempt: 'asc' }, { at: 'asc' }] } },
      }),
      this.prisma.webhookDelivery.count({ where }),
    ]);
    return {
      data: rows.map((row) => ({
        id: row.id,
        webhookId: row.subscriptionId,
        eventId: row.eventId,
        eventType: row.eventType,
        payload: openText(this.deps.cipher, row.payloadEnc, row.payload) ?? '',
        status: row.status,
        attemptCount: row.attempts,
        nextAttemptAt: row.nextAttemptAt,
        createdAt: row.createdAt,
        updatedAt: row.updatedAt,
        attempts: row.attemptLog,
      })),
      pagination: { limit, offset, total },
    };
  }

  /**
   * The dashboard's test event: an example event of `type` (default the
   * subscription's first type), attempted at once through the delivery
   * engine; a failure is retried like any delivery.
   */
  async sendTest(id: string, type?: string | null) {
    const sub = await this.find(id, 'write');
    if (sub.status !== 'active') throw new AppError('CONFLICT', `Webhook '${id}' is disabled; re-enable it before sending a test event`);
    const eventType = (type ?? sub.events[0]) as WebhookEventType;
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(eventType)) {
      throw validationError('Invalid event type', [{ path: 'type', message: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }]);
    }
    const now = new Date();
    const eventId = newId('evt_test');
    const payload = JSON.stringify(
      webhookBody({ id: eventId, type: eventType, timestamp: now.toISOString(), data: sampleData(eventType, now), tenantId: sub.tenantId }),
    );
    const delivery = await this.deps.engine.createClaimed(sub, { id: eventId, type: eventType, payload });
    const report = await this.deps.engine.attempt(delivery);
    if (!report) throw new AppError('CONFLICT', `Webhook '${id}' was disabled meanwhile`);
    return {
      deliveryId: delivery.id,
      eventId,
      eventType,
      success: report.outcome.success,
      statusCode: report.outcome.statusCode,
      durationMs: report.outcome.durationMs,
      error: report.outcome.error,
      deliveryStatus: report.status,
      nextAttemptAt: report.nextAttemptAt,
    };
  }

  /**
   * Starts re-sending what the subscription missed in [since, until] (until: now when omitted or later), as a
   * job (recovery.ts); the answer is the recovery, `running`. A disabled subscription cannot receive: CONFLICT.
   */
  async recover(id: string, input: unknown): Promise<WebhookRecoveryView> {
    const sub = await this.find(id, 'write');
    const parsed = recoverSchema.safeParse(input);
    if (!parsed.success) throw validationError('Invalid recovery', zodDetails(parsed.error.issues));
    const now = this.deps.clock.now();
    const since = new Date(parsed.data.since);
    const asked = parsed.data.until === undefined ? now : new Date(parsed.data.until);
    const until = asked > now ? now : asked;
    const oldest = new Date(now.getTime() - this.deps.retentionDays * DAY_MS);
    if (since < oldest) {
      throw validationError('Invalid recovery', [
        { path: 'since', message: `must be within the event retention (${this.deps.retentionDays} days): not before ${oldest.toISOString()}` },
      ]);
    }
    if (since > until) throw validationError('Invalid recovery', [{ path: 'since', message: 'must not be after until' }]);
    if (sub.status !== 'active') throw new AppError('CONFLICT', `Webhook '${id}' is disabled; re-enable it before recovering what it missed`);
    const row = await this.prisma.$transaction(async (tx) => {
      const created = await tx.webhookRecovery.create({
        data: { tenantId: sub.tenantId, id: newId('rcv'), subscriptionId: sub.id, since, until, all: parsed.data.all ?? false, createdBy: this.identity.sub },
      });
      // In the same transaction: a recovery the caller was told about always has its job.
      const job: WebhookRecoveryJob = { tenantId: sub.tenantId, recoveryId: created.id };
      await enqueueInTransaction(this.deps.boss, tx, WEBHOOK_RECOVERY_QUEUE, job, undefined, this.deps.clock);
      return created;
    });
    return recoveryView(row);
  }

  async recovery(id: string, recoveryId: string): Promise<WebhookRecoveryView> {
    const sub = await this.find(id);
    const row = await this.prisma.webhookRecovery.findFirst({ where: { id: recoveryId, subscriptionId: sub.id } });
    if (!row) throw notFound('Webhook recovery', recoveryId);
    return recoveryView(row);
  }

  async alerts(limit?: number | null) {
    this.requireManager('read');
    const page = validatePage(limit, 0);
    const rows = await this.prisma.alert.findMany({
      where: { tenantId: this.identity.tenantId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: page.limit,
    });
    return rows.map((row) => {
      const data = (row.data ?? {}) as { url?: string; reason?: string };
      return {
        id: row.id,
        type: row.type,
        webhookId: row.webhookId,
        message: row.message,
        url: data.url ?? null,
        reason: data.reason ?? null,
        createdAt: row.createdAt,
      };
    });
  }
}

/** Failure streak (failed attempts since the last success) and latest failure of one subscription. */
export async function webhookHealth(prisma: MessagingPrisma, tenantId: string, id: string): Promise<WebhookHealth> {
  const ofSubscription = { tenantId, delivery: { subscriptionId: id } };
  const [lastSuccess, lastFailure] = await Promise.all([
    prisma.webhookAttempt.findFirst({ where: { ...ofSubscription, success: true }, orderBy: { at: 'desc' }, select: { at: true } }),
    prisma.webhookAttempt.findFirst({ where: { ...ofSubscription, success: false }, orderBy: { at: 'desc' }, select: { at: true, error: true } }),
  ]);
  const failureStreak =
    lastFailure && (!lastSuccess || lastFailure.at > lastSuccess.at)
      ? await prisma.webhookAttempt.count({ where: { ...ofSubscription, success: false, ...(lastSuccess ? { at: { gt: lastSuccess.at } } : {}) } })
      : 0;
  return { failureStreak, lastFailureAt: lastFailure?.at ?? null, lastFailureError: lastFailure?.error ?? null };
}
