import type PgBoss from 'pg-boss';
import { buildFederatedSchema, type FederatedSchema } from '../../common/graphql/federation';
import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { FieldCipher } from '../../common/crypto';
import type { EventBus } from '../../common/events/bus';
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
import { WebhookService, type WebhookServiceDeps } from './webhooks/webhook.service';
import { ReplyService } from './replies/reply.service';
import { recordProviderStatus } from './delivery/callbacks';

export const MESSAGING_SUBGRAPH = 'messaging';

export function buildMessagingSchema(): Promise<FederatedSchema> {
  return buildFederatedSchema({
    resolvers: [PatientExtensionResolver, MessageResolver, TemplateResolver, PreferenceResolver, ReplyResolver, WebhookResolver],
    // Patient is reached only through federation, so no query of ours names it.
    orphanedTypes: [Patient],
    referenceResolvers: { ...patientReference, ...messageReference },
  });
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
}

/** Per-request services of the messaging subgraph, bound to the caller's identity and tenant. */
export function createMessagingContext(deps: MessagingDeps) {
  return (base: BaseContext): MessagingContext => ({
    ...base,
    preferences: new PreferenceService(deps.prisma, deps.clinical, base.identity),
    messages: new MessageService(deps, base.identity),
    templates: new TemplateService(deps.prisma, base.identity),
    webhooks: new WebhookService(deps.prisma, base.identity, deps.webhooks),
    replies: new ReplyService(deps, base.identity),
    recordProviderStatus: (providerMessageId, status, errorCode) => recordProviderStatus(deps, base.identity, providerMessageId, status, errorCode),
  });
}
