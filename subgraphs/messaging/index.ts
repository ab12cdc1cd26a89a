import type PgBoss from 'pg-boss';
import { buildFederatedSchema, type FederatedSchema } from '../../common/graphql/federation';
import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { FieldCipher } from '../../common/crypto';
import type { EventBus } from '../../common/events/bus';
import { tenantClient } from '../../common/db/tenant-session';
import type { MessagingPrisma } from './db/client';
import type { MessagingContext } from './context';
import type { ClinicalRecord } from './clinical-record/client';
import { PatientExtensionResolver, patientReference } from './patients/patient.resolver';
import { Patient } from './patients/patient.types';
import { MessageResolver, messageReference } from './messages/message.resolver';
import { TemplateResolver } from './templates/template.resolver';
import { PreferenceResolver } from './preferences/preference.resolver';
import { ReplyResolver } from './replies/reply.resolver';
import { PreferenceService } from './preferences/preference.service';
import { MessageService } from './messages/message.service';
import { TemplateService } from './templates/template.service';
import { WebhookResolver } from './webhooks/webhook.resolver';
import { ReminderSettingsResolver } from './reminders/reminder-settings.resolver';
import { ReminderSettingsService } from './reminders/reminder-settings.service';
import { WebhookService, type WebhookServiceDeps } from './webhooks/webhook.service';
import { ReplyService } from './replies/reply.service';
import { ReplyKeywordResolver } from './replies/reply-keyword.resolver';
import { ReplyKeywordService } from './replies/reply-keyword.service';
import { recordProviderStatus } from './delivery/callbacks';
import { OrganizationResolver } from './organizations/organization.resolver';
import { OrganizationService } from './organizations/organization.service';
import type { RateLimitCategory } from '../../common/config';
import type { TenantActivity } from '../../common/activity/tenant-activity';
import type { MessagingMetrics } from './metrics';
import { MessagingPrivacyResolver } from './privacy/privacy.resolver';
import { MessagingPrivacyService } from './privacy/erasure.service';
import { PatientExportService } from './privacy/export.service';
import { systemClock, type Clock } from '../../common/clock';

export const MESSAGING_SUBGRAPH = 'messaging';

let messagingSchema: Promise<FederatedSchema> | undefined;

/**
 * Built once per process: the schema depends on no setting, and a process that serves the subgraph more than once
 * (several platforms in one test process, the supergraph composition beside a running server) shares it.
 */
export function buildMessagingSchema(): Promise<FederatedSchema> {
  return (messagingSchema ??= buildFederatedSchema({
    resolvers: [
      PatientExtensionResolver,
      MessageResolver,
      TemplateResolver,
      PreferenceResolver,
      ReplyResolver,
      WebhookResolver,
      ReminderSettingsResolver,
      ReplyKeywordResolver,
      MessagingPrivacyResolver,
      OrganizationResolver,
    ],
    // Patient is reached only through federation, so no query of ours names it.
    orphanedTypes: [Patient],
    referenceResolvers: { ...patientReference, ...messageReference },
  }));
}

export interface MessagingDeps {
  prisma: MessagingPrisma;
  webhooks: WebhookServiceDeps;
  cipher: FieldCipher;
  /** Key of the recipient phone hash (inbound replies find their conversation by it). */
  hashKey: Buffer;
  clinical: ClinicalRecord;
  boss: PgBoss;
  events: EventBus;
  /** Moves the clinical record's new events into messaging's pipeline (events/clinical-relay.ts). */
  relayClinicalEvents: () => Promise<unknown>;
  metrics: MessagingMetrics;
  /** The deployment's per-minute limits, which a tenant's own settings override. */
  rateLimits: Record<RateLimitCategory, number>;
  /** Each tenant's recent API activity as the gateway records it (absent: not reported). */
  activity?: TenantActivity;
  /** The time of messages, replies, status changes and export expiry (default: the system clock). */
  clock?: Clock;
}

/** Per-request services of the messaging subgraph, bound to the caller's identity and tenant. */
export function createMessagingContext(deps: MessagingDeps) {
  return (base: BaseContext): MessagingContext => {
    // Every query of the request runs with the caller's tenant set (row-level security).
    const tenant = { ...deps, prisma: tenantClient(deps.prisma, base.identity.tenantId) };
    // Organisations are platform records, not rows of one tenant: the base client, not the tenant's.
    const organizations = new OrganizationService(
      { prisma: deps.prisma, events: deps.events, rateLimits: deps.rateLimits, activity: deps.activity },
      base.identity,
    );
    return {
      ...base,
      preferences: new PreferenceService(tenant.prisma, deps.clinical, base.identity),
      messages: new MessageService(tenant, base.identity, base.deadline),
      templates: new TemplateService(tenant.prisma, base.identity),
      webhooks: new WebhookService(tenant.prisma, base.identity, deps.webhooks),
      replies: new ReplyService(deps, base.identity),
      reminderSettings: new ReminderSettingsService(organizations),
      replyKeywords: new ReplyKeywordService(organizations),
      privacy: new MessagingPrivacyService(tenant.prisma, base.identity, deps.cipher, organizations),
      patientExports: new PatientExportService(tenant.prisma, base.identity, {
        clinical: deps.clinical,
        boss: deps.boss,
        clock: deps.clock ?? systemClock,
        cipher: deps.cipher,
      }),
      organizations,
      recordProviderStatus: (provider, providerMessageId, status, errorCode) =>
        recordProviderStatus(deps, base.identity, provider, providerMessageId, status, errorCode),
    };
  };
}
