import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { PreferenceService } from './preferences/preference.service';
import type { MessageService } from './messages/message.service';
import type { TemplateService } from './templates/template.service';
import type { WebhookService } from './webhooks/webhook.service';
import type { ReplyService } from './replies/reply.service';

export interface MessagingContext extends BaseContext {
  preferences: PreferenceService;
  messages: MessageService;
  templates: TemplateService;
  webhooks: WebhookService;
  replies: ReplyService;
  recordProviderStatus(providerMessageId: string, status: string, errorCode: string | null): Promise<boolean>;
}
