import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { Pagination } from '../../../common/graphql/pagination';

@ObjectType({ description: 'A webhook subscription. Its secret is write-only: only a secret the server generated is returned, once.' })
export class Webhook {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  url!: string;

  @Field(() => [String], { description: 'Event types delivered, e.g. message.delivered.' })
  events!: string[];

  @Field(() => String, { description: 'active | disabled' })
  status!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;

  @Field(() => String, { description: 'parallel (default) | fifo: one delivery at a time, in event order, a retried event holding back the later ones.' })
  ordering!: string;

  @Field(() => Int, { nullable: true, description: 'At most this many deliveries a second to the endpoint; null: no limit.' })
  rateLimit!: number | null;

  @Field(() => Date, { nullable: true })
  disabledAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'Why the subscription was disabled.' })
  disabledReason!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The secret the server generated (whsec_…) for a subscription created without one: in that createWebhook answer only, null everywhere else.',
  })
  secret?: string | null;
}

/** How a subscription's endpoint has been answering lately (the dashboard's failure streak). */
export interface WebhookHealth {
  failureStreak: number;
  lastFailureAt: Date | null;
  lastFailureError: string | null;
}

@ObjectType()
export class WebhookList {
  @Field(() => [Webhook])
  data!: Webhook[];
}

@InputType()
export class CreateWebhookInput {
  @Field(() => String, { description: 'https:// URL that must not resolve to an internal address.' })
  url!: string;

  @Field(() => [String], { description: 'A non-empty subset of the six event types.' })
  events!: string[];

  @Field(() => String, {
    nullable: true,
    description:
      'At least 16 characters (whsec_ + base64 of at least 16 bytes for a Standard Webhooks key); signs every delivery. Omitted: the server generates one and returns it once.',
  })
  secret?: string | null;

  @Field(() => String, { nullable: true, description: 'parallel (default) | fifo.' })
  ordering?: string | null;

  @Field(() => Int, { nullable: true, description: 'At most this many deliveries a second (1..10000); omitted: no limit.' })
  rateLimit?: number | null;
}

@InputType()
export class UpdateWebhookInput {
  @Field(() => String, { nullable: true })
  url?: string | null;

  @Field(() => [String], { nullable: true })
  events?: string[] | null;

  @Field(() => String, { nullable: true })
  secret?: string | null;

  @Field(() => String, { nullable: true, description: 'active (re-enable; admin only) | disabled (pause)' })
  status?: string | null;

  @Field(() => String, { nullable: true, description: 'parallel | fifo.' })
  ordering?: string | null;

  @Field(() => Int, { nullable: true, description: 'At most this many deliveries a second (1..10000); an explicit null removes the limit.' })
  rateLimit?: number | null;
}

@InputType({ description: 'The window of a recovery.' })
export class RecoverWebhookInput {
  @Field(() => String, { description: 'ISO 8601 with an offset; within the event retention (WEBHOOK_RETENTION_DAYS).' })
  since!: string;

  @Field(() => String, { nullable: true, description: 'ISO 8601 with an offset; default (and at most) now.' })
  until?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'true: re-send every event of the window, received ones too.' })
  all?: boolean | null;
}

@ObjectType({ description: 'A re-send of the events of a window that a subscription missed, worked as a job.' })
export class WebhookRecovery {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  webhookId!: string;

  @Field(() => Date)
  since!: Date;

  @Field(() => Date)
  until!: Date;

  @Field(() => Boolean)
  all!: boolean;

  @Field(() => String, { description: 'running | done | failed (the subscription was disabled meanwhile).' })
  status!: string;

  @Field(() => Int, { description: 'Events re-sent so far.' })
  events!: number;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  finishedAt!: Date | null;
}

@ObjectType({ description: 'One attempt to deliver an event to a subscription.' })
export class WebhookAttempt {
  @Field(() => Int, { description: '1 = first attempt, 2.. = retries.' })
  attempt!: number;

  @Field(() => Date)
  at!: Date;

  @Field(() => Int, { nullable: true, description: 'HTTP status of the answer; null when none came.' })
  statusCode!: number | null;

  @Field(() => Int)
  durationMs!: number;

  @Field(() => Boolean)
  success!: boolean;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => String, { nullable: true, description: 'The first KiB of the answer body.' })
  responseSnippet!: string | null;

  @Field(() => String, { nullable: true, description: 'The X-Webhook-Signature header sent with this attempt; null when no request was made.' })
  signature!: string | null;
}

@ObjectType({ description: 'One event for one subscription, with every attempt made.' })
export class WebhookDelivery {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  webhookId!: string;

  @Field(() => ID)
  eventId!: string;

  @Field(() => String)
  eventType!: string;

  @Field(() => String, { description: 'The exact JSON body sent (and signed) on every attempt.' })
  payload!: string;

  @Field(() => String, { description: 'pending | succeeded | failed | cancelled' })
  status!: string;

  @Field(() => Int)
  attemptCount!: number;

  @Field(() => Date, { nullable: true, description: 'When the next attempt is due (pending only).' })
  nextAttemptAt!: Date | null;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;

  @Field(() => [WebhookAttempt])
  attempts!: WebhookAttempt[];
}

@ObjectType()
export class WebhookDeliveryPage {
  @Field(() => [WebhookDelivery])
  data!: WebhookDelivery[];

  @Field(() => Pagination)
  pagination!: Pagination;
}

@ObjectType({ description: "The result of the dashboard's test event: its first attempt, made at once." })
export class WebhookTestResult {
  @Field(() => ID)
  deliveryId!: string;

  @Field(() => ID)
  eventId!: string;

  @Field(() => String)
  eventType!: string;

  @Field(() => Boolean)
  success!: boolean;

  @Field(() => Int, { nullable: true })
  statusCode!: number | null;

  @Field(() => Int)
  durationMs!: number;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => String, { description: 'The delivery after the attempt: succeeded, or pending with a retry scheduled, or failed.' })
  deliveryStatus!: string;

  @Field(() => Date, { nullable: true })
  nextAttemptAt!: Date | null;
}

@ObjectType({ description: 'An operational alert, e.g. a webhook subscription disabled after failing.' })
export class Alert {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'webhook.disabled' })
  type!: string;

  @Field(() => ID, { nullable: true })
  webhookId!: string | null;

  @Field(() => String)
  message!: string;

  @Field(() => String, { nullable: true })
  url!: string | null;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => Date)
  createdAt!: Date;
}

@ObjectType()
export class AlertList {
  @Field(() => [Alert])
  data!: Alert[];
}
