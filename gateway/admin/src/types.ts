/** Shapes of the public GraphQL API the dashboard reads (schema/supergraph.graphql). */

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  status: string;
  createdAt: string;
  updatedAt: string;
  disabledAt: string | null;
  disabledReason: string | null;
  failureStreak: number;
  lastFailureAt: string | null;
  lastFailureError: string | null;
}

export const WEBHOOK_FIELDS = 'id url events status createdAt updatedAt disabledAt disabledReason failureStreak lastFailureAt lastFailureError';

interface Attempt {
  attempt: number;
  at: string;
  statusCode: number | null;
  durationMs: number;
  success: boolean;
  error: string | null;
  responseSnippet: string | null;
  signature: string | null;
}

export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  payload: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  createdAt: string;
  attempts: Attempt[];
}

export interface Alert {
  id: string;
  type: string;
  webhookId: string | null;
  message: string;
  url: string | null;
  reason: string | null;
  createdAt: string;
}

export interface Message {
  id: string;
  patientId: string;
  templateId: string;
  channel: string;
  status: string;
  error: string | null;
  sendAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export const MESSAGE_FIELDS = 'id patientId templateId channel status error sendAt createdAt updatedAt';

export interface Template {
  id: string;
  version: number;
  name: string;
  channel: string;
  language: string;
  subject: string | null;
  body: string;
  variables: Array<{ name: string; type: string; required: boolean }>;
}

/** A new random signing secret in the server's own form: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}
