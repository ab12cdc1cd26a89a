import { ROLES, type Identity, type Role } from '../../../common/auth/principal';
import { grants, markdownTable, type Action, type Grant } from '../../../common/auth/policy-table';
import { ALL_TENANTS, EACH_TENANT, SYSTEM_SUBJECTS } from '../../../common/auth/system-identities';
import { AppError } from '../../../common/errors';
import type { PlatformEvent } from '../../../common/events/types';

/**
 * THE MESSAGING POLICY POINT. Every authorization decision of the messaging
 * subgraph (its GraphQL fields, whether a client, the gateway's REST adapter or
 * the SMS provider's webhooks call them) and of the gateway's event
 * subscriptions is made here, from the tables below: role × area grants,
 * how far each role reaches (the whole tenant or the caller's own patient),
 * administrative capabilities and the reserved identities of the platform.
 * Nothing else tests role names. docs/security.md renders these tables
 * (npm run docs:policy). Consent to be messaged is the clinical record's.
 */

/** `message`: message bodies, statuses and the event stream; write = send, batch, remind. */
const MESSAGING_AREAS = ['message', 'preferences', 'template', 'webhook'] as const;
export type MessagingArea = (typeof MESSAGING_AREAS)[number];
/** Areas that hold a patient's data; the others are the tenant's configuration. */
const PATIENT_AREAS: readonly MessagingArea[] = ['message', 'preferences'];

type Reach = 'tenant' | 'own record' | 'none';

interface RoleRule {
  reach: Reach;
  grants: Record<MessagingArea, Grant>;
}

const row = (g: Grant[]): Record<MessagingArea, Grant> => Object.fromEntries(MESSAGING_AREAS.map((area, i) => [area, g[i]])) as Record<MessagingArea, Grant>;

/** Role × area. Columns: message, preferences, template, webhook (webhook read includes deliveries and alerts). */
const ROLE_RULES: Record<Role, RoleRule> = {
  admin: { reach: 'tenant', grants: row(['rw', 'rw', 'rw', 'rw']) },
  clinician: { reach: 'tenant', grants: row(['rw', 'rw', 'r', '-']) },
  nurse: { reach: 'tenant', grants: row(['rw', 'rw', 'r', '-']) },
  receptionist: { reach: 'tenant', grants: row(['rw', 'rw', 'r', '-']) },
  integration: { reach: 'tenant', grants: row(['rw', 'rw', 'r', 'rw']) },
  patient: { reach: 'own record', grants: row(['r', 'rw', 'r', '-']) },
  // Organisation context: the tenant's templates, never message bodies or patients' settings.
  support: { reach: 'none', grants: row(['-', '-', 'r', '-']) },
  platform_admin: { reach: 'none', grants: row(['-', '-', '-', '-']) },
};

interface CapabilityRule {
  roles: readonly Role[];
  /** Reserved subjects that hold it too. */
  reserved?: readonly string[];
  what: string;
}

/** Administrative capabilities outside the role × area table. */
const CAPABILITIES = {
  simulateReply: { roles: ['admin'], what: 'inject a simulated patient reply' },
  receiveInboundSms: {
    roles: ['admin', 'integration'],
    reserved: [SYSTEM_SUBJECTS.smsProvider],
    what: 'post an inbound SMS (the SMS provider: to any tenant)',
  },
  reportDeliveryStatus: { roles: [], reserved: [SYSTEM_SUBJECTS.smsProvider], what: "report a provider's delivery status" },
  reEnableWebhook: { roles: ['admin'], what: 're-enable a disabled webhook' },
  alertEvents: { roles: ['admin'], what: 'subscribe to webhook.disabled alerts' },
  sendAutomaticReminders: { roles: [], reserved: [SYSTEM_SUBJECTS.reminderScheduler], what: "send an appointment's automatic reminder when it is due" },
  manageReminderSettings: { roles: ['admin'], what: "set the tenant's reminder lead times (cadence)" },
  manageReplyKeywords: { roles: ['admin'], what: "read and set the tenant's own reply keywords" },
  erasePatientData: { roles: ['admin'], what: "erase a patient's messaging data (GDPR art. 17)" },
  exportPatientData: { roles: ['admin'], what: "export a patient's data (GDPR art. 15/20; a patient may export their own)" },
  manageRetention: { roles: ['admin'], what: "read and set the tenant's retention periods of messaging data" },
  manageTenants: { roles: ['platform_admin'], what: 'list, create, suspend and resume tenants and change their settings and limits (every tenant)' },
  readOrganization: {
    roles: ['admin', 'support'],
    what: "read their own tenant's profile, settings, limits and operational health (no patient data)",
  },
  readTenantAccess: { roles: [], reserved: [SYSTEM_SUBJECTS.gateway], what: "read a tenant's status and limits before serving a call" },
} as const satisfies Record<string, CapabilityRule>;
export type Capability = keyof typeof CAPABILITIES;

/**
 * The platform's own components: the SMS provider's webhooks, proven by the
 * provider's signature (a client token never carries a reserved subject),
 * act in every tenant and hold only their capabilities above.
 */
const RESERVED_IDENTITIES: Record<string, { tenantId: string; what: string }> = {
  [SYSTEM_SUBJECTS.smsProvider]: { tenantId: ALL_TENANTS, what: "the SMS provider's webhooks (inbound SMS, delivery statuses)" },
  [SYSTEM_SUBJECTS.reminderScheduler]: { tenantId: EACH_TENANT, what: "messaging's reminder jobs, each in its appointment's tenant" },
  [SYSTEM_SUBJECTS.gateway]: { tenantId: ALL_TENANTS, what: "the gateway, reading a tenant's record before it serves a call" },
};

function reserved(identity: Pick<Identity, 'sub' | 'tenantId'>): boolean {
  if (!Object.hasOwn(RESERVED_IDENTITIES, identity.sub)) return false;
  const { tenantId } = RESERVED_IDENTITIES[identity.sub];
  return tenantId === identity.tenantId || (tenantId === EACH_TENANT && identity.tenantId !== ALL_TENANTS);
}

/** Whether the caller acts across tenants (the SMS provider), so lookups are not limited to one tenant. */
export function actsInAllTenants(identity: Pick<Identity, 'sub' | 'tenantId'>): boolean {
  return reserved(identity) && identity.tenantId === ALL_TENANTS;
}

export function can(identity: Identity, capability: Capability): boolean {
  const rule: CapabilityRule = CAPABILITIES[capability];
  if (reserved(identity)) return rule.reserved?.includes(identity.sub) ?? false;
  return identity.roles.some((role) => rule.roles.includes(role));
}

export function assertCan(identity: Identity, capability: Capability): void {
  if (can(identity, capability)) return;
  const rule: CapabilityRule = CAPABILITIES[capability];
  const who = [...rule.roles, ...(rule.reserved ?? [])].join(' or ');
  throw new AppError('FORBIDDEN', `Not allowed: only ${who} may ${rule.what}`);
}

/**
 * Whether the caller may act on an area, for one patient (patientId) or the
 * whole tenant (undefined). A patient reaches only their own patient.
 */
export function allowed(identity: Identity, action: Action, area: MessagingArea, patientId?: string): boolean {
  if (reserved(identity)) return false;
  return identity.roles.some((role) => {
    const rule = ROLE_RULES[role];
    if (!grants(rule.grants[area], action)) return false;
    if (!PATIENT_AREAS.includes(area) || rule.reach === 'tenant') return true;
    return rule.reach === 'own record' && patientId !== undefined && patientId === identity.patientId;
  });
}

/**
 * FORBIDDEN, or NOT_FOUND (as the record's absence) when the caller reaches
 * the area only on their own patient and this is another one.
 */
export function assertAllowed(identity: Identity, action: Action, area: MessagingArea, patientId?: string, what = 'Patient'): void {
  if (allowed(identity, action, area, patientId)) return;
  const ownOnly = patientId !== undefined && identity.patientId !== undefined && allowed(identity, action, area, identity.patientId);
  if (ownOnly) throw new AppError('NOT_FOUND', `${what} '${patientId}' was not found`);
  throw new AppError(
    'FORBIDDEN',
    `Not allowed: role ${identity.roles.join(', ') || '(none)'} may not ${action} ${area} data${patientId ? ' of this patient' : ''}`,
  );
}

/** A reminder of an appointment: whoever may send messages, or the reminder scheduler when it falls due. */
/** A subject access export: the capability, or a caller whose role reaches only their own record, for that record. */
export function assertMayExport(identity: Identity, patientId: string): void {
  if (can(identity, 'exportPatientData')) return;
  const own = identity.patientId === patientId && identity.roles.some((role) => ROLE_RULES[role].reach === 'own record');
  if (!own) assertCan(identity, 'exportPatientData');
}

export function assertMayRemind(identity: Identity): void {
  if (can(identity, 'sendAutomaticReminders')) return;
  assertAllowed(identity, 'write', 'message');
}

/**
 * The patients of the tenant whose `area` data a read covers: all (undefined)
 * or only the caller's own (their patient id); FORBIDDEN when none.
 */
export function readScope(identity: Identity, area: MessagingArea): string | undefined {
  if (allowed(identity, 'read', area)) return undefined;
  if (identity.patientId !== undefined && allowed(identity, 'read', area, identity.patientId)) return identity.patientId;
  throw new AppError('FORBIDDEN', `Not allowed: role ${identity.roles.join(', ') || '(none)'} may not read ${area} data`);
}

/**
 * The gateway's subscription filter: may this subscriber see this event? Its
 * tenant's events only; alerts need `alertEvents`; every other event is about
 * one patient's messages (or appointments), so it needs `message` read on that patient.
 */
export function canSeeEvent(identity: Identity, event: Pick<PlatformEvent, 'tenantId' | 'type' | 'data'>): boolean {
  if (event.tenantId !== identity.tenantId) return false;
  if (event.type === 'webhook.disabled') return can(identity, 'alertEvents');
  if (allowed(identity, 'read', 'message')) return true;
  const patientId = (event.data as { patientId?: unknown }).patientId;
  return typeof patientId === 'string' && allowed(identity, 'read', 'message', patientId);
}

/**
 * Whose organisation record the caller may read: every tenant's with
 * `manageTenants` or `readTenantAccess`, else only the tenant it acts in with
 * `readOrganization`. Another tenant's record looks absent (NOT_FOUND).
 */
export function assertCanReadOrganization(identity: Identity, organizationId: string): void {
  if (can(identity, 'manageTenants') || can(identity, 'readTenantAccess')) return;
  assertCan(identity, 'readOrganization');
  if (organizationId !== identity.tenantId) throw new AppError('NOT_FOUND', `Organisation '${organizationId}' was not found`);
}

/** The tables above as Markdown, for docs/security.md. */
export function renderRules(): string {
  const roleRows = ROLES.map((role) => [role, ROLE_RULES[role].reach, ...MESSAGING_AREAS.map((area) => ROLE_RULES[role].grants[area])]);
  const capabilityRows = Object.entries(CAPABILITIES).map(([name, rule]: [string, CapabilityRule]) => [
    `\`${name}\``,
    rule.what,
    [...rule.roles, ...(rule.reserved ?? []).map((sub) => `\`${sub}\``)].join(', '),
  ]);
  const reservedRows = Object.entries(RESERVED_IDENTITIES).map(([sub, r]) => [`\`${sub}\``, `\`${r.tenantId}\``, r.what]);
  return [
    `**Messaging** (\`subgraphs/messaging/policy/rules.ts\`). \`message\`: bodies, statuses and the event stream (write: send, batch, remind); \`webhook\`: subscriptions, deliveries and alerts. \`reaches\` applies to ${PATIENT_AREAS.join(' and ')} (a patient's data); templates and webhooks are the tenant's configuration.`,
    '',
    markdownTable(['role', 'reaches', ...MESSAGING_AREAS], roleRows),
    '',
    markdownTable(['capability', 'allows', 'held by'], capabilityRows),
    '',
    markdownTable(['reserved identity', 'tenant', 'is'], reservedRows),
  ].join('\n');
}

export type { Action };
