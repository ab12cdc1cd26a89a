/**
 * The events CareGraph publishes to webhooks (docs/api.md §6) and mirrors to
 * GraphQL subscriptions (docs/api.md §9); the admin dashboard offers the same list. One shape for both, so an integrator
 * sees the same `id`, `type`, `timestamp` and `data` on either channel.
 */
export const WEBHOOK_EVENT_TYPES = [
  'message.sent',
  'message.delivered',
  'message.failed',
  'message.response',
  'message.cancelled',
  'appointment.booked',
  'appointment.rescheduled',
  'appointment.confirmed',
  'appointment.cancelled',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Not deliverable to webhooks: raised when a subscription is disabled, seen by admins on subscriptions. */
export const ALERT_EVENT_TYPES = ['webhook.disabled'] as const;
type AlertEventType = (typeof ALERT_EVENT_TYPES)[number];

/**
 * Bus-only: every status change of a message, `queued` and `sending` included,
 * for the `messageStatusChanged` subscription; and `tenant.changed`, which
 * tells every gateway to drop its cached copy of a tenant's record (`tenantId`
 * names the tenant, `data.status` its new status). Never delivered to webhooks.
 */
type InternalEventType = 'message.status' | 'tenant.changed';

export type EventType = WebhookEventType | AlertEventType | InternalEventType;

export interface MessageEventData {
  messageId: string;
  patientId: string;
  channel: string;
  status: string;
  error?: string;
}

export interface MessageResponseData {
  messageId: string;
  patientId: string;
  channel: string;
  body: string;
  receivedAt: string;
}

/** An event as delivered: the webhook body is exactly `{id, type, timestamp, data}`. */
export interface PlatformEvent<T = Record<string, unknown>> {
  id: string;
  type: EventType;
  /** ISO 8601 UTC. */
  timestamp: string;
  data: T;
  /** Routing only; never part of a webhook body. */
  tenantId: string;
}

/** A new event id (`evt_` and a UUID): receivers de-duplicate deliveries on it. */
// The global Web Crypto, not node:crypto: the admin dashboard's browser bundle imports this module too.
export const newEventId = (): string => `evt_${crypto.randomUUID()}`;

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** GraphQL enum value of an event type: `message.delivered` → `MESSAGE_DELIVERED`. */
export function eventTypeToEnum(type: EventType): string {
  return type.replace(/\./g, '_').toUpperCase();
}

/** The webhook body of an event (tenant routing stripped). */
export function webhookBody(event: PlatformEvent): { id: string; type: string; timestamp: string; data: unknown } {
  return { id: event.id, type: event.type, timestamp: event.timestamp, data: event.data };
}
