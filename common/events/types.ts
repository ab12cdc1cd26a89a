/**
 * The events CareGraph publishes to webhooks (CONTRACT §6) and mirrors to
 * GraphQL subscriptions (CONTRACT §9). One shape for both, so an integrator
 * sees the same `id`, `type`, `timestamp` and `data` on either channel.
 */
export const WEBHOOK_EVENT_TYPES = [
  'message.sent',
  'message.delivered',
  'message.failed',
  'message.response',
  'appointment.confirmed',
  'appointment.cancelled',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Not deliverable to webhooks: raised when a subscription is disabled, seen by admins on subscriptions. */
export const ALERT_EVENT_TYPES = ['webhook.disabled'] as const;
export type AlertEventType = (typeof ALERT_EVENT_TYPES)[number];

/**
 * Bus-only: every status change of a message, `queued` and `sending` included,
 * for the `messageStatusChanged` subscription. Never delivered to webhooks.
 */
export const INTERNAL_EVENT_TYPES = ['message.status'] as const;
export type InternalEventType = (typeof INTERNAL_EVENT_TYPES)[number];

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

export interface AppointmentEventData {
  appointmentId: string;
  patientId: string;
  status: string;
  start: string;
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
