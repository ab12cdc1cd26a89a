import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A per-minute limit of one rate-limit category (MESSAGES_SEND, MESSAGES_READ, PATIENTS, TEMPLATES, WEBHOOKS, EHR).' })
export class RateLimitSetting {
  @Field(() => String)
  category!: string;

  @Field(() => Int)
  limit!: number;
}

@InputType()
export class RateLimitSettingInput {
  @Field(() => String, { description: 'MESSAGES_SEND, MESSAGES_READ, PATIENTS, TEMPLATES, WEBHOOKS or EHR.' })
  category!: string;

  @Field(() => Int, { description: 'Calls per minute, 1..1000000.' })
  limit!: number;
}

@ObjectType({ description: 'A retention period (days) of one messaging category (messages, webhook_deliveries).' })
export class RetentionSettingView {
  @Field(() => String)
  category!: string;

  @Field(() => Int)
  days!: number;
}

@InputType()
export class RetentionSettingInput {
  @Field(() => String, { description: 'messages or webhook_deliveries.' })
  category!: string;

  @Field(() => Int, { description: 'Days, 1..36525.' })
  days!: number;
}

@ObjectType({ description: "The tenant's own reply keywords of one language, matched beside the built-in ones (English for every patient)." })
export class ReplyKeywordsView {
  @Field(() => String, { description: "Language code, e.g. 'nl'." })
  language!: string;

  @Field(() => [String], { description: "Words that turn the patient's sms off." })
  optOut!: string[];

  @Field(() => [String], { description: 'Words that turn it on again.' })
  optIn!: string[];

  @Field(() => [String], { description: 'Words answered with the automatic help reply.' })
  help!: string[];
}

@InputType()
export class ReplyKeywordsInput {
  @Field(() => String, { description: "Two- or three-letter language code ('en' for every patient)." })
  language!: string;

  @Field(() => [String], { nullable: true, description: 'One word each (letters and digits, at most 32), at most 20.' })
  optOut?: string[] | null;

  @Field(() => [String], { nullable: true })
  optIn?: string[] | null;

  @Field(() => [String], { nullable: true })
  help?: string[] | null;
}

@ObjectType({ description: "An organisation's settings." })
export class OrganizationSettingsView {
  @Field(() => [RateLimitSetting], { description: "This tenant's own limits (arranged with the provider); other categories use the deployment's." })
  rateLimits!: RateLimitSetting[];

  @Field(() => String, { nullable: true, description: "Where the provider's support desk reaches the organisation." })
  supportEmail!: string | null;

  @Field(() => Int, { nullable: true, description: 'Minutes before an appointment its automatic reminder goes out; null: the default (1440).' })
  reminderLeadMinutes!: number | null;

  @Field(() => [Int], {
    nullable: true,
    description: 'The reminder cadence, minutes before an appointment of each reminder; null: the single reminderLeadMinutes.',
  })
  reminderLeadTimes!: number[] | null;

  @Field(() => [RetentionSettingView], { description: "This tenant's own retention periods of messaging data; other categories use the default." })
  retention!: RetentionSettingView[];

  @Field(() => [ReplyKeywordsView], { description: "This tenant's own reply keywords per language, beside the built-in ones." })
  replyKeywords!: ReplyKeywordsView[];
}

@InputType({ description: 'The whole settings: limits, lead time and periods left out fall back to the defaults.' })
export class OrganizationSettingsInput {
  @Field(() => [RateLimitSettingInput], { nullable: true })
  rateLimits?: RateLimitSettingInput[] | null;

  @Field(() => String, { nullable: true })
  supportEmail?: string | null;

  @Field(() => Int, { nullable: true, description: 'Minutes, 0..20160.' })
  reminderLeadMinutes?: number | null;

  @Field(() => [Int], { nullable: true, description: '1..10 distinct lead times in minutes, 0..20160 each; wins over reminderLeadMinutes.' })
  reminderLeadTimes?: number[] | null;

  @Field(() => [RetentionSettingInput], { nullable: true })
  retention?: RetentionSettingInput[] | null;

  @Field(() => [ReplyKeywordsInput], {
    nullable: true,
    description: 'Words a word of the same language (or English) already has for another action are refused.',
  })
  replyKeywords?: ReplyKeywordsInput[] | null;
}

@ObjectType({ description: 'The limit a category is held to for this tenant now.' })
export class RateLimitInForceView {
  @Field(() => String)
  category!: string;

  @Field(() => Int, { description: 'Calls per minute per token subject.' })
  limit!: number;

  @Field(() => Boolean, { description: "True when it is this tenant's own limit rather than the deployment's." })
  overridden!: boolean;
}

@ObjectType({ description: 'A webhook subscription as support sees it: its health, never its secret or payloads.' })
export class WebhookHealthView {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  url!: string;

  @Field(() => [String])
  events!: string[];

  @Field(() => String, { description: 'active | disabled' })
  status!: string;

  @Field(() => Date, { nullable: true })
  disabledAt!: Date | null;

  @Field(() => String, { nullable: true })
  disabledReason!: string | null;

  @Field(() => Int, { description: 'Failed attempts since the last success.' })
  failureStreak!: number;

  @Field(() => Date, { nullable: true })
  lastFailureAt!: Date | null;

  @Field(() => String, { nullable: true })
  lastFailureError!: string | null;

  @Field(() => Date, { nullable: true })
  lastAttemptAt!: Date | null;

  @Field(() => Int, { nullable: true })
  lastAttemptStatusCode!: number | null;

  @Field(() => Boolean, { nullable: true })
  lastAttemptSucceeded!: boolean | null;
}

@ObjectType({ description: 'An alert still open: its webhook subscription is still disabled.' })
export class OpenAlert {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  type!: string;

  @Field(() => ID, { nullable: true })
  webhookId!: string | null;

  @Field(() => String)
  message!: string;

  @Field(() => Date)
  createdAt!: Date;
}

@ObjectType()
export class CountByKey {
  @Field(() => String)
  key!: string;

  @Field(() => Int)
  count!: number;
}

@ObjectType({ description: 'Messages created in the window: how many, their statuses now, and why the failed ones failed.' })
export class MessageVolume {
  @Field(() => Int)
  total!: number;

  @Field(() => [CountByKey])
  byStatus!: CountByKey[];

  @Field(() => [CountByKey])
  failureReasons!: CountByKey[];
}

@ObjectType({ description: 'What is going wrong for an organisation, without any patient data.' })
export class OrganizationHealth {
  @Field(() => Date, { description: 'Start of the window (the last 24 hours).' })
  since!: Date;

  @Field(() => [WebhookHealthView])
  webhooks!: WebhookHealthView[];

  @Field(() => [OpenAlert])
  openAlerts!: OpenAlert[];

  @Field(() => MessageVolume)
  messages!: MessageVolume;
}

@ObjectType({ description: 'One error a call of the tenant answered (no patient data: code, message, operation).' })
export class ApiErrorView {
  @Field(() => Date)
  at!: Date;

  @Field(() => String)
  code!: string;

  @Field(() => String)
  message!: string;

  @Field(() => String, { description: 'Operation name, or its root fields.' })
  operation!: string;

  @Field(() => String, { description: 'Token subject of the caller.' })
  subject!: string;

  @Field(() => String, { description: 'X-Request-Id of the call, to find it in the logs.' })
  requestId!: string;
}

@ObjectType({ description: 'A caller (token subject) seen lately.' })
export class RecentCaller {
  @Field(() => String)
  subject!: string;

  @Field(() => [String])
  roles!: string[];

  @Field(() => Date)
  lastSeenAt!: Date;
}

@ObjectType({ description: "Calls counted this minute in one category, by all of the tenant's callers." })
export class CategoryUsage {
  @Field(() => String)
  category!: string;

  @Field(() => Int)
  count!: number;
}

@ObjectType({ description: "The tenant's API activity as the gateways record it (bounded: the latest 50 errors and 100 callers of the last day)." })
export class OrganizationActivity {
  @Field(() => [CategoryUsage])
  usage!: CategoryUsage[];

  @Field(() => [ApiErrorView])
  recentErrors!: ApiErrorView[];

  @Field(() => [RecentCaller])
  recentCallers!: RecentCaller[];
}

@ObjectType({ description: 'A change made to an organisation (append-only log).' })
export class OrganizationChangeView {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'create | suspend | resume | update' })
  action!: string;

  @Field(() => String)
  actor!: string;

  @Field(() => Date)
  at!: Date;

  @Field(() => String, { nullable: true })
  reason!: string | null;
}

@ObjectType({ description: 'A tenant of the platform.' })
export class Organization {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'active | suspended (every call in a suspended tenant is refused with FORBIDDEN).' })
  status!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;
}

@ObjectType({ description: 'Who is calling: the token as the platform reads it.' })
export class Viewer {
  @Field(() => String)
  subject!: string;

  @Field(() => [String])
  roles!: string[];

  @Field(() => [String], { description: 'Every tenant the token grants.' })
  tenants!: string[];

  @Field(() => String, { description: "The tenant this call acts in ('*' for a platform admin acting in no tenant)." })
  tenantId!: string;

  @Field(() => Date, { nullable: true, description: 'When the token expires.' })
  tokenExpiresAt!: Date | null;
}

@ObjectType()
export class OrganizationList {
  @Field(() => [Organization])
  data!: Organization[];
}
