import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import type { EventBus } from '../common/events/bus';
import type { EventType, PlatformEvent } from '../common/events/types';
import { tenantClient } from '../common/db/tenant-session';
import { createMessagingPrisma, type MessagingPrisma } from '../subgraphs/messaging/db/client';
import type { TestPlatform } from './harness';

/** graphql-ws clients for the e2e subscription suites: a real client over a real WebSocket. */
export const wsUrl = (t: TestPlatform) => `${t.url.replace(/^http/, 'ws')}/graphql`;

export interface Connection {
  client: Client;
  /** Resolves with the close code and reason once the socket closes. */
  closed: Promise<{ code: number; reason: string }>;
  dispose(): Promise<void>;
}

export function connect(t: TestPlatform, connectionParams: Record<string, unknown> | undefined): Connection {
  let onClosed!: (value: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (onClosed = resolve));
  const client = createClient({
    url: wsUrl(t),
    webSocketImpl: WebSocket,
    connectionParams,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => {},
    on: { closed: (event) => onClosed({ code: (event as { code: number }).code, reason: String((event as { reason: unknown }).reason) }) },
  });
  return { client, closed, dispose: () => client.dispose() as Promise<void> };
}

export async function connectAs(t: TestPlatform, token: string, tenantId?: string): Promise<Connection> {
  return connect(t, { authorization: `Bearer ${token}`, ...(tenantId ? { tenantId } : {}) });
}

/** Everything one subscription receives, with waits that resolve as soon as enough has arrived. */
export class Subscription<T = any> {
  readonly results: Array<{ data?: T; errors?: any[] }> = [];
  error?: unknown;
  completed = false;
  private readonly waiters = new Set<() => void>();
  readonly stop: () => void;

  constructor(client: Client, query: string, variables?: Record<string, unknown>) {
    this.stop = client.subscribe<T>(
      { query, variables },
      {
        next: (result) => this.notify(() => this.results.push(result as { data?: T; errors?: any[] })),
        error: (error) => this.notify(() => (this.error = error)),
        complete: () => this.notify(() => (this.completed = true)),
      },
    );
  }

  /** Waits until `predicate` holds; `false` after `ms` (for probing, never for asserting timing). */
  until(predicate: () => boolean, ms = 20_000): Promise<boolean> {
    if (predicate()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        resolve(false);
      }, ms);
      this.waiters.add(check);
    });
  }

  /** The first `n` results (without probes), or what arrived when the subscription ended. */
  async take(n: number): Promise<Array<{ data?: T; errors?: any[] }>> {
    await this.until(() => this.real().length >= n || this.completed || this.error !== undefined);
    return this.real().slice(0, n);
  }

  /** Waits for the end of the subscription (error or complete). */
  async ended(): Promise<void> {
    await this.until(() => this.completed || this.error !== undefined);
  }

  real() {
    return this.results.filter((r) => !JSON.stringify(r).includes(PROBE_PREFIX));
  }

  private notify(change: () => void) {
    change();
    for (const waiter of [...this.waiters]) waiter();
  }
}

const PROBE_PREFIX = 'evt_probe_';

export function event(tenantId: string, type: EventType, data: Record<string, unknown>): PlatformEvent {
  return { id: `evt_${randomUUID()}`, type, timestamp: new Date().toISOString(), data, tenantId };
}

/**
 * graphql-ws does not acknowledge a subscribe, so a test cannot know when
 * the server listens. A probe subscription sent after the ones under test
 * (same socket, processed in order) is answered only once the server is
 * subscribed: publish probes until it hears one, then the others hear too.
 */
export async function untilLive(bus: EventBus, connection: Connection, tenantId: string, patientId = 'p-probe'): Promise<void> {
  const probe = new Subscription(connection.client, 'subscription Probe { events(types: [APPOINTMENT_CANCELLED]) { id } }');
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      await bus.publish({
        ...event(tenantId, 'appointment.cancelled', { appointmentId: 'probe', patientId, status: 'cancelled', start: '' }),
        id: `${PROBE_PREFIX}${randomUUID()}`,
      });
      if (await probe.until(() => probe.results.length > 0, 50)) return;
    }
    throw new Error('the subscription server never started listening');
  } finally {
    probe.stop();
  }
}

/** A message row as the send pipeline writes it (queued), for status-change streams. */
export async function insertMessage(prisma: MessagingPrisma, tenantId: string, patientId: string): Promise<string> {
  const row = await tenantClient(prisma, tenantId).message.create({
    data: { tenantId, patientId, templateId: 'appointment-reminder', channel: 'sms', variables: {}, body: 'Reminder: tomorrow 09:30', status: 'queued' },
  });
  return row.id;
}

/** Moves a message through `statuses` as the pipeline does: the row changes, then the bus event follows the commit. */
export async function advance(
  prisma: MessagingPrisma,
  bus: EventBus,
  tenantId: string,
  messageId: string,
  patientId: string,
  statuses: string[],
): Promise<void> {
  for (const status of statuses) {
    await tenantClient(prisma, tenantId).message.update({ where: { id: messageId }, data: { status } });
    await bus.publish(event(tenantId, 'message.status', { messageId, patientId, channel: 'sms', status }));
  }
}

export function messagingPrisma(t: TestPlatform): MessagingPrisma {
  return createMessagingPrisma(t.platform.db!);
}
