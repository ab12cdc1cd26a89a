import { Kind, parse, type ConstDirectiveNode } from 'graphql';
import type { RateLimitCategory } from '../../common/config';

/** Classified on purpose as outside every category. */
export const NOT_LIMITED = 'NOT_LIMITED';

/**
 * Which rate-limit category (docs/api.md §7) each GraphQL root field spends.
 * REST paths run one GraphQL operation each, so this table is the single
 * source for both. A root field of the supergraph that is neither listed here
 * nor owned by the ehr subgraph is unclassified: a test fails until it is added.
 */
const ROOT_FIELD_CATEGORIES: Readonly<Record<string, RateLimitCategory | typeof NOT_LIMITED>> = {
  // send, batch (one call), remind; the simulator's injected reply is a client write on messages too
  sendMessage: 'MESSAGES_SEND',
  sendMessages: 'MESSAGES_SEND',
  remindAppointment: 'MESSAGES_SEND',
  cancelMessage: 'MESSAGES_SEND',
  simulateReply: 'MESSAGES_SEND',
  // The SMS provider's callbacks (signature-checked, one per message event): limiting them would lose replies and statuses.
  receiveSms: NOT_LIMITED,
  recordDeliveryStatus: NOT_LIMITED,
  // message reads and lists
  message: 'MESSAGES_READ',
  messages: 'MESSAGES_READ',
  // patients, preferences, appointment list: owned partly by the ehr subgraph, yet PATIENTS
  patient: 'PATIENTS',
  patients: 'PATIENTS',
  appointment: 'PATIENTS',
  appointments: 'PATIENTS',
  updatePreferences: 'PATIENTS',
  // a patient's rights (erasure of messaging data, the subject-access export and its download chunks)
  erasePatientMessagingData: 'PATIENTS',
  requestPatientExport: 'PATIENTS',
  patientExport: 'PATIENTS',
  patientExportChunk: 'PATIENTS',
  // templates
  templates: 'TEMPLATES',
  template: 'TEMPLATES',
  createTemplate: 'TEMPLATES',
  updateTemplate: 'TEMPLATES',
  deleteTemplate: 'TEMPLATES',
  // webhooks and their alerts
  webhooks: 'WEBHOOKS',
  webhook: 'WEBHOOKS',
  createWebhook: 'WEBHOOKS',
  updateWebhook: 'WEBHOOKS',
  deleteWebhook: 'WEBHOOKS',
  webhookDeliveries: 'WEBHOOKS',
  sendTestEvent: 'WEBHOOKS',
  recoverWebhook: 'WEBHOOKS',
  webhookRecovery: 'WEBHOOKS',
  alerts: 'WEBHOOKS',
  // the tenant's own record and operational health (support desk), and tenant administration: configuration, like webhooks
  viewer: 'WEBHOOKS',
  organization: 'WEBHOOKS',
  organizations: 'WEBHOOKS',
  createOrganization: 'WEBHOOKS',
  suspendOrganization: 'WEBHOOKS',
  resumeOrganization: 'WEBHOOKS',
  updateOrganization: 'WEBHOOKS',
  // the tenant's messaging settings: reminder lead time, reply keywords and retention periods
  reminderSettings: 'WEBHOOKS',
  setReminderLeadTime: 'WEBHOOKS',
  setReminderLeadTimes: 'WEBHOOKS',
  replyKeywords: 'WEBHOOKS',
  setReplyKeywords: 'WEBHOOKS',
  messagingRetention: 'WEBHOOKS',
  setMessagingRetention: 'WEBHOOKS',
};

/** The subgraph whose fields are clinical: everything it owns is EHR unless listed above. */
const CLINICAL_SUBGRAPH = 'EHR';

type RootType = 'Query' | 'Mutation' | 'Subscription';

export interface RootField {
  type: RootType;
  name: string;
  /** `join__Graph` enum values of the subgraphs that resolve it (upper case, e.g. EHR). */
  owners: string[];
}

export function categoryOf(field: Pick<RootField, 'name' | 'owners'>): RateLimitCategory | typeof NOT_LIMITED | undefined {
  return ROOT_FIELD_CATEGORIES[field.name] ?? (field.owners.includes(CLINICAL_SUBGRAPH) ? 'EHR' : undefined);
}

/** The root fields of a composed supergraph and their owning subgraphs (from `@join__field(graph:)`). */
export function supergraphRootFields(supergraphSdl: string): RootField[] {
  const fields: RootField[] = [];
  for (const definition of parse(supergraphSdl).definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    const type = definition.name.value;
    if (type !== 'Query' && type !== 'Mutation' && type !== 'Subscription') continue;
    // A field without @join__field belongs to the subgraphs of its type's @join__type (a type only one subgraph defines).
    const typeOwners = graphsOf(definition.directives, 'join__type');
    for (const field of definition.fields ?? []) {
      const fieldOwners = graphsOf(field.directives, 'join__field');
      fields.push({ type, name: field.name.value, owners: fieldOwners.length > 0 ? fieldOwners : typeOwners });
    }
  }
  return fields;
}

function graphsOf(directives: readonly ConstDirectiveNode[] | undefined, name: string): string[] {
  return (directives ?? [])
    .filter((directive) => directive.name.value === name)
    .flatMap((directive) => directive.arguments ?? [])
    .filter((argument) => argument.name.value === 'graph' && argument.value.kind === Kind.ENUM)
    .map((argument) => (argument.value as { value: string }).value);
}

/** `Query.patient` → category, for every classified root field of the supergraph. */
export function categoryTable(supergraphSdl: string): { table: Map<string, RateLimitCategory>; unclassified: RootField[] } {
  const table = new Map<string, RateLimitCategory>();
  const unclassified: RootField[] = [];
  for (const field of supergraphRootFields(supergraphSdl)) {
    const category = categoryOf(field);
    if (!category) unclassified.push(field);
    else if (category !== NOT_LIMITED) table.set(`${field.type}.${field.name}`, category);
  }
  return { table, unclassified };
}

/**
 * REST paths by category, used only to report the caller's budget on REST
 * answers refused before their GraphQL operation ran (bad parameters, bad
 * body). Requests that reach the operation are counted by its root fields.
 */
const REST_PATHS: ReadonlyArray<{ method?: string; path: RegExp; category: RateLimitCategory }> = [
  { path: /^\/api\/ehr(\/|$)/, category: 'EHR' },
  { method: 'GET', path: /^\/v1\/messages(\/|$)/, category: 'MESSAGES_READ' },
  { path: /^\/v1\/messages(\/|$)/, category: 'MESSAGES_SEND' },
  { method: 'POST', path: /^\/v1\/appointments\/[^/]+\/remind\/?$/, category: 'MESSAGES_SEND' },
  { path: /^\/v1\/(patients|appointments)(\/|$)/, category: 'PATIENTS' },
  { path: /^\/v1\/templates(\/|$)/, category: 'TEMPLATES' },
  { path: /^\/v1\/(webhooks|alerts)(\/|$)/, category: 'WEBHOOKS' },
  { method: 'POST', path: /^\/v1\/simulator\/replies\/?$/, category: 'MESSAGES_SEND' },
];

export function restPathCategory(method: string, path: string): RateLimitCategory | undefined {
  return REST_PATHS.find((rule) => (!rule.method || rule.method === method) && rule.path.test(path))?.category;
}
