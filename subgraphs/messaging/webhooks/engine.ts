import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../common/clock';
import type { FieldCipher } from '../../../common/crypto';
import type { EventBus } from '../../../common/events/bus';
import { webhookBody, type PlatformEvent } from '../../../common/events/types';
import type { Logger } from '../../../common/logger';
import { tenantClient } from '../../../common/db/tenant-session';
import type { MessagingPrisma } from '../db/client';
import { claimDueWebhookDeliveries, nextWebhookDeliveryDue, tenantsWithUndispatchedEvents } from '../db/cross-tenant';
import { Prisma, type Event, type WebhookDelivery, type WebhookSubscription } from '../db/generated/client';
import type { AttemptOutcome, WebhookSender } from './sender';
import { openJson, openText } from '../sealed';
import type { MessagingMetrics } from '../metrics';
import { context, contextFrom } from '../../../common/telemetry/tracing';

/** A Retry-After answer may push a retry later than the schedule, but never beyond this. */
const RETRY_AFTER_CAP_MS = 24 * 3_600_000;
/** How long a claim outlives the attempt's own timeout before another worker may take the delivery over. */
const LEASE_MARGIN_MS = 30_000;
export const DISPATCH_BATCH = 200;

type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

export interface EngineOptions {
  prisma: MessagingPrisma;
  sender: WebhookSender;
  cipher: FieldCipher;
  /** Delays of the retries after the first attempt (docs/api.md §2 WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: number[];
  timeoutMs: number;
  events: EventBus;
  logger: Logger;
  metrics: MessagingMetrics;
  /** Due times, leases and retry times are read from it. */
  clock: Clock;
}

export interface AttemptReport {
  outcome: AttemptOutcome;
  attempt: number;
  /** The delivery's status after this attempt ('pending' = a retry is scheduled). */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

/** A claimed delivery with its subscription. */
export type ClaimedDelivery = WebhookDelivery & { subscription: WebhookSubscription };

/** An attempt made but not yet recorded, with the state it leads to. */
export interface AttemptResult {
  delivery: ClaimedDelivery;
  at: Date;
  finishedAt: Date;
  /** Set when this outcome disables the subscription (410, or the last retry failed). */
  disableReason?: string;
  report: AttemptReport;
}

/** Prisma keeps DateTime as UTC `timestamp(3)`; a zone in a `::timestamp` literal is ignored. */
const sqlTime = (date: Date | null) => date?.toISOString() ?? null;

/** The subscription's secrets that sign at `at`: the current one, then the previous one while its overlap lasts. */
function secretsInForce(cipher: FieldCipher, sub: Pick<WebhookSubscription, 'secret' | 'previousSecret' | 'previousUntil'>, at: Date): string[] {
  const secrets = [cipher.decrypt(sub.secret)];
  if (sub.previousSecret !== null && sub.previousUntil !== null && sub.previousUntil > at) secrets.push(cipher.decrypt(sub.previousSecret));
  return secrets;
}

/** The body of an event's deliveries (the exact bytes sent and signed on every attempt), sealed for storage. */
export function sealedDeliveryBody(cipher: FieldCipher, event: Pick<Event, 'id' | 'type' | 'createdAt' | 'tenantId' | 'data' | 'dataEnc'>): string {
  const data = openJson<Record<string, unknown>>(cipher, event.dataEnc, event.data);
  return cipher.encrypt(
    JSON.stringify(
      webhookBody({ id: event.id, type: event.type as PlatformEvent['type'], timestamp: event.createdAt.toISOString(), data, tenantId: event.tenantId }),
    ),
  );
}

export const newId = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '')}`;

/**
 * The delivery engine: turns outbox events into deliveries, claims due
 * deliveries, makes attempts and applies the outcome rules of docs/api.md §6.
 * All state lives in the database; any number of processes may run it.
 */
export class WebhookEngine {
  constructor(private readonly options: EngineOptions) {}

  private get prisma() {
    return this.options.prisma;
  }

  /**
   * Fan-out: every undispatched outbox event becomes one delivery per active
   * subscription of its tenant that listens to its type (created before the
   * event), and is marked dispatched, one transaction per tenant and batch.
   * SKIP LOCKED lets several dispatchers work side by side without taking the
   * same event. Returns how many events were dispatched and deliveries created.
   */
  async dispatchPending(): Promise<{ events: number; deliveries: number }> {
    const total = { events: 0, deliveries: 0 };
    for (const tenantId of await tenantsWithUndispatchedEvents(this.prisma)) {
      const done = await this.dispatchTenant(tenantId);
      total.events += done.events;
      total.deliveries += done.deliveries;
    }
    return total;
  }

  /** One batch of a tenant's undispatched events (row-level security keeps every statement below in the tenant). */
  private dispatchTenant(tenantId: string): Promise<{ events: number; deliveries: number }> {
    return tenantClient(this.prisma, tenantId).$transaction(async (tx) => {
      // One dispatcher at a time per tenant: deliveries are then created in the order their events became
      // visible, which a fifo subscription relies on (two batches committed out of order would swap events).
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-dispatch:${tenantId}`}, 0))::text AS locked`;
      const locked = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM "messaging"."Event" WHERE "dispatchedAt" IS NULL
        ORDER BY "createdAt", seq LIMIT ${DISPATCH_BATCH}::int FOR UPDATE SKIP LOCKED`;
      if (locked.length === 0) return { events: 0, deliveries: 0 };
      const events = await tx.event.findMany({ where: { id: { in: locked.map((e) => e.id) } }, orderBy: [{ createdAt: 'asc' }, { seq: 'asc' }] });
      const subscriptions = await tx.webhookSubscription.findMany({
        where: { tenantId: { in: [...new Set(events.map((e) => e.tenantId))] }, status: 'active' },
        select: { id: true, tenantId: true, events: true, createdAt: true },
      });
      const now = this.options.clock.now();
      const deliveries = [];
      for (const event of events) {
        // Encrypted once per event; every subscription's delivery stores the same ciphertext of the same bytes.
        const payloadEnc = sealedDeliveryBody(this.options.cipher, event);
        for (const sub of subscriptions) {
          if (sub.tenantId !== event.tenantId || !sub.events.includes(event.type) || sub.createdAt > event.createdAt) continue;
          deliveries.push({
            tenantId: event.tenantId,
            id: newId('dlv'),
            subscriptionId: sub.id,
            eventId: event.id,
            eventType: event.type,
            payloadEnc,
            status: 'pending',
            nextAttemptAt: now,
            eventAt: event.createdAt,
            eventSeq: event.seq,
            traceparent: event.traceparent,
          });
        }
      }
      if (deliveries.length > 0) await tx.webhookDelivery.createMany({ data: deliveries, skipDuplicates: true });
      await tx.event.updateMany({ where: { id: { in: events.map((e) => e.id) } }, data: { dispatchedAt: now } });
      return { events: events.length, deliveries: deliveries.length };
    });
  }

  /**
   * Claims up to `limit` due deliveries for this worker, at most `perEndpoint`
   * in flight per subscription over all workers: one UPDATE whose subquery
   * locks the rows with SKIP LOCKED, so two workers never claim the same
   * delivery, and sets a lease that expires if this worker dies mid-attempt.
   * Each delivery comes with its subscription (one read per tenant).
   */
  async claimDue(limit: number, perEndpoint: number, now = this.options.clock.now()): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const token = randomUUID();
    const leaseUntil = new Date(now.getTime() + this.options.timeoutMs + LEASE_MARGIN_MS);
    const claimed = await claimDueWebhookDeliveries(this.prisma, token, leaseUntil, now, limit, perEndpoint);
    const deliveries: ClaimedDelivery[] = [];
    for (const tenantId of new Set(claimed.map((c) => c.tenantId))) {
      const ids = claimed.filter((c) => c.tenantId === tenantId).map((c) => c.id);
      deliveries.push(
        ...(await tenantClient(this.prisma, tenantId).webhookDelivery.findMany({
          where: { id: { in: ids }, leaseToken: token },
          include: { subscription: true },
        })),
      );
    }
    return deliveries;
  }

  /** When the next pending delivery falls due (unclaimed or with an expired claim), if any. */
  async nextDueAt(now = this.options.clock.now()): Promise<Date | null> {
    return nextWebhookDeliveryDue(this.prisma, now);
  }

  /** Creates a delivery already claimed by the caller (the dashboard's test event, attempted at once). */
  async createClaimed(sub: WebhookSubscription, event: { id: string; type: string; payload: string }): Promise<WebhookDelivery> {
    const now = this.options.clock.now();
    return tenantClient(this.prisma, sub.tenantId).webhookDelivery.create({
      data: {
        tenantId: sub.tenantId,
        id: newId('dlv'),
        subscriptionId: sub.id,
        eventId: event.id,
        eventType: event.type,
        payloadEnc: this.options.cipher.encrypt(event.payload),
        status: 'pending',
        nextAttemptAt: now,
        eventAt: now,
        claimedAt: now,
        leaseToken: randomUUID(),
        leaseUntil: new Date(now.getTime() + this.options.timeoutMs + LEASE_MARGIN_MS),
      },
    });
  }

  /**
   * Makes one attempt of a delivery this worker has claimed and records it
   * (the dashboard's test event). Success ends the delivery; 410 Gone disables the subscription at once;
   * any other failure schedules the next retry (Retry-After on 429/503 may
   * push it later), and the failure of the last retry disables the subscription.
   */
  async attempt(delivery: WebhookDelivery): Promise<AttemptReport | null> {
    const sub = await tenantClient(this.prisma, delivery.tenantId).webhookSubscription.findUnique({ where: { id: delivery.subscriptionId } });
    if (!sub || sub.status !== 'active') {
      await this.cancel(delivery);
      return null;
    }
    const result = await this.send({ ...delivery, subscription: sub });
    await this.recordOne(result);
    return result.report;
  }

  /** A claimed delivery whose subscription is no longer active is cancelled, not attempted. */
  private async cancel(delivery: WebhookDelivery): Promise<void> {
    await tenantClient(this.prisma, delivery.tenantId).webhookDelivery.updateMany({
      where: { id: delivery.id, leaseToken: delivery.leaseToken, status: 'pending' },
      data: { status: 'cancelled', nextAttemptAt: null, leaseToken: null, leaseUntil: null },
    });
  }

  /**
   * Makes one attempt of a claimed delivery and decides its next state,
   * without recording it: the worker records many outcomes at once (`record`).
   */
  async send(delivery: ClaimedDelivery): Promise<AttemptResult> {
    const sub = delivery.subscription;
    const at = this.options.clock.now();
    const { cipher } = this.options;
    const payload = openText(cipher, delivery.payloadEnc, delivery.payload)!;
    // The attempt's span continues the trace of the change that recorded the event.
    const outcome = await context.with(contextFrom({ traceparent: delivery.traceparent }), () =>
      this.options.sender.send(
        { url: sub.url, secrets: secretsInForce(cipher, sub, at), eventId: delivery.eventId, eventType: delivery.eventType, payload },
        at,
      ),
    );
    const attempt = delivery.attempts + 1;
    const finishedAt = this.options.clock.now();
    this.options.metrics.webhookAttempt(outcome.success ? 'success' : outcome.statusCode === null ? 'error' : 'http_error', outcome.durationMs / 1000);
    const schedule = this.options.retrySchedule;

    let status: DeliveryStatus;
    let nextAttemptAt: Date | null = null;
    let disableReason: string | undefined;
    if (outcome.success) status = 'succeeded';
    else if (outcome.statusCode === 410) {
      status = 'failed';
      disableReason = 'the endpoint answered 410 Gone';
    } else if (attempt <= schedule.length) {
      status = 'pending';
      const retryAfter = outcome.retryAfterMs === null ? 0 : Math.min(outcome.retryAfterMs, RETRY_AFTER_CAP_MS);
      nextAttemptAt = new Date(finishedAt.getTime() + Math.max(schedule[attempt - 1], retryAfter));
    } else {
      status = 'failed';
      disableReason = `delivery ${delivery.id} (event ${delivery.eventId}) failed ${attempt} attempts, the last with: ${outcome.error}`;
    }
    return { delivery, at, finishedAt, disableReason, report: { outcome, attempt, status, nextAttemptAt } };
  }

  /**
   * Records the outcomes of many attempts: per tenant, one transaction with
   * one INSERT of the attempts and one UPDATE of the deliveries. An outcome
   * that disables its subscription is recorded on its own, with the disabling.
   */
  async record(results: AttemptResult[]): Promise<void> {
    const plain = results.filter((r) => !r.disableReason);
    for (const result of results.filter((r) => r.disableReason)) await this.recordOne(result);
    for (const tenantId of new Set(plain.map((r) => r.delivery.tenantId))) {
      const mine = plain.filter((r) => r.delivery.tenantId === tenantId);
      const updatedAt = this.options.clock.now();
      await tenantClient(this.prisma, tenantId).$transaction(async (tx) => {
        // A delivery deleted meanwhile (its subscription was) takes no attempt; the lock keeps the others until commit.
        const kept = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM "messaging"."WebhookDelivery" WHERE id IN (${Prisma.join(mine.map((r) => r.delivery.id))}) ORDER BY id FOR UPDATE`;
        const existing = new Set(kept.map((k) => k.id));
        await tx.webhookAttempt.createMany({ data: mine.filter((r) => existing.has(r.delivery.id)).map((r) => this.attemptRow(r)) });
        // Only while our claim holds and nobody cancelled the delivery meanwhile.
        const rows = mine.map(
          (r) =>
            Prisma.sql`(${r.delivery.id}, ${r.delivery.leaseToken}, ${r.report.status}, ${r.report.attempt}::int, ${sqlTime(r.report.nextAttemptAt)}::timestamp, ${sqlTime(r.at)}::timestamp)`,
        );
        await tx.$executeRaw`
          UPDATE "messaging"."WebhookDelivery" d
          SET status = v.status, attempts = v.attempt, "nextAttemptAt" = v.next, "lastAttemptAt" = v.at,
              "leaseToken" = NULL, "leaseUntil" = NULL, "updatedAt" = ${sqlTime(updatedAt)}::timestamp
          FROM (VALUES ${Prisma.join(rows)}) AS v(id, token, status, attempt, next, at)
          WHERE d.id = v.id AND d."leaseToken" = v.token AND d.status = 'pending'`;
      });
    }
  }

  private attemptRow({ delivery, at, report: { attempt, outcome } }: AttemptResult) {
    return {
      tenantId: delivery.tenantId,
      id: newId('att'),
      deliveryId: delivery.id,
      attempt,
      at,
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
      success: outcome.success,
      error: outcome.error,
      responseSnippet: outcome.responseSnippet,
      signature: outcome.signature,
    };
  }

  /** One outcome in its own transaction, with the disabling of its subscription when it calls for it. */
  private async recordOne(result: AttemptResult): Promise<void> {
    const { delivery, report, disableReason, at, finishedAt } = result;
    const sub = delivery.subscription;
    const disabled = await tenantClient(this.prisma, delivery.tenantId).$transaction(async (tx) => {
      await tx.webhookAttempt.create({ data: this.attemptRow(result) });
      // Only while our claim holds and nobody cancelled the delivery meanwhile.
      const updated = await tx.webhookDelivery.updateMany({
        where: { id: delivery.id, leaseToken: delivery.leaseToken, status: 'pending' },
        data: { status: report.status, attempts: report.attempt, nextAttemptAt: report.nextAttemptAt, lastAttemptAt: at, leaseToken: null, leaseUntil: null },
      });
      if (updated.count === 0 || !disableReason) return undefined;
      return this.disableIn(tx, sub, disableReason, finishedAt);
    });
    if (disabled) await this.announceDisabled(sub, disabled);
  }

  /**
   * Disables a subscription (once: only an active one), stops its pending
   * deliveries and writes the alert, in the caller's transaction.
   */
  private async disableIn(
    tx: Parameters<Parameters<MessagingPrisma['$transaction']>[0]>[0],
    sub: WebhookSubscription,
    reason: string,
    disabledAt: Date,
  ): Promise<{ alertId: string; reason: string; disabledAt: Date } | undefined> {
    const changed = await tx.webhookSubscription.updateMany({
      where: { id: sub.id, status: 'active' },
      data: { status: 'disabled', disabledAt, disabledReason: reason },
    });
    if (changed.count === 0) return undefined;
    await tx.webhookDelivery.updateMany({
      where: { subscriptionId: sub.id, status: 'pending' },
      data: { status: 'cancelled', nextAttemptAt: null },
    });
    const alertId = newId('alr');
    await tx.alert.create({
      data: {
        tenantId: sub.tenantId,
        id: alertId,
        type: 'webhook.disabled',
        webhookId: sub.id,
        message: `Webhook ${sub.id} (${sub.url}) was disabled: ${reason}`,
        data: { webhookId: sub.id, url: sub.url, reason, disabledAt: disabledAt.toISOString() },
        createdAt: disabledAt,
      },
    });
    return { alertId, reason, disabledAt };
  }

  /** After the commit: the live `webhook.disabled` event and the log line of the alert. */
  private async announceDisabled(sub: WebhookSubscription, disabled: { alertId: string; reason: string; disabledAt: Date }): Promise<void> {
    this.options.logger.warn(
      { alert: 'webhook.disabled', alertId: disabled.alertId, tenantId: sub.tenantId, webhookId: sub.id, url: sub.url, reason: disabled.reason },
      'webhook subscription disabled',
    );
    const event: PlatformEvent = {
      id: newId('evt'),
      type: 'webhook.disabled',
      timestamp: disabled.disabledAt.toISOString(),
      data: { webhookId: sub.id, url: sub.url, reason: disabled.reason, disabledAt: disabled.disabledAt.toISOString() },
      tenantId: sub.tenantId,
    };
    try {
      await this.options.events.publish(event);
    } catch (err) {
      this.options.logger.error({ err, webhookId: sub.id }, 'could not publish webhook.disabled');
    }
  }
}
