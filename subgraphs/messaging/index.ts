import { buildFederatedSchema, type FederatedSchema } from '../../common/graphql/federation';
import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { MessagingPrisma } from './db/client';
import type { MessagingContext } from './context';
import { PatientExtensionResolver, patientReference } from './patients/patient.resolver';
import { Patient } from './patients/patient.types';
import { MessageResolver, messageReference } from './messages/message.resolver';
import { TemplateResolver } from './templates/template.resolver';
import { PreferenceService } from './preferences/preference.service';
import { MessageService } from './messages/message.service';
import { TemplateService } from './templates/template.service';
import { WebhookResolver } from './webhooks/webhook.resolver';
import { WebhookService, type WebhookServiceDeps } from './webhooks/webhook.service';

export const MESSAGING_SUBGRAPH = 'messaging';

export function buildMessagingSchema(): Promise<FederatedSchema> {
  return buildFederatedSchema({
    resolvers: [PatientExtensionResolver, MessageResolver, TemplateResolver, WebhookResolver],
    // Patient is reached only through federation, so no query of ours names it.
    orphanedTypes: [Patient],
    referenceResolvers: { ...patientReference, ...messageReference },
  });
}

export interface MessagingDeps {
  prisma: MessagingPrisma;
  webhooks: WebhookServiceDeps;
}

/** Per-request services of the messaging subgraph, bound to the caller's identity and tenant. */
export function createMessagingContext(deps: MessagingDeps) {
  return (base: BaseContext): MessagingContext => ({
    ...base,
    preferences: new PreferenceService(deps.prisma, base.identity),
    messages: new MessageService(deps.prisma, base.identity),
    templates: new TemplateService(deps.prisma, base.identity),
    webhooks: new WebhookService(deps.prisma, base.identity, deps.webhooks),
  });
}
