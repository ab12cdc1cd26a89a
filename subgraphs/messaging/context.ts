import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { PreferenceService } from './preferences/preference.service';
import type { MessageService } from './messages/message.service';
import type { TemplateService } from './templates/template.service';
import type { WebhookService } from './webhooks/webhook.service';
import type { ReplyService } from './replies/reply.service';
import type { ReminderSettingsService } from './reminders/reminder-settings.service';
import type { ReplyKeywordService } from './replies/reply-keyword.service';
import type { MessagingPrivacyService } from './privacy/erasure.service';
import type { PatientExportService } from './privacy/export.service';
import type { OrganizationService } from './organizations/organization.service';

export interface MessagingContext extends BaseContext {
  preferences: PreferenceService;
  messages: MessageService;
  templates: TemplateService;
  webhooks: WebhookService;
  replies: ReplyService;
  reminderSettings: ReminderSettingsService;
  replyKeywords: ReplyKeywordService;
  privacy: MessagingPrivacyService;
  patientExports: PatientExportService;
  organizations: OrganizationService;
  recordProviderStatus(provider: string, providerMessageId: string, status: string, errorCode: string | null): Promise<boolean>;
}
