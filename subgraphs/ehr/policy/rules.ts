import { ROLES, type Identity, type Role } from '../../../common/auth/principal';
import { grantOf, grants, markdownTable, type Action, type Grant } from '../../../common/auth/policy-table';
import { SYSTEM_SUBJECTS } from '../../../common/auth/system-identities';
import { AppError } from '../../../common/errors';
import { PURPOSES_OF_USE } from '../../../common/auth/purpose-of-use';
import { resourceScopes } from '../../../common/auth/smart-scopes';

/**
 * THE CLINICAL RECORD'S POLICY POINT. Every authorization decision of the EHR
 * subgraph (its GraphQL fields, whichever gateway adapter calls them: REST, FHIR, openEHR) is made here, from the tables
 * below: role × area grants, how far each role reaches (the whole tenant, or
 * the caller's own record), consent requirements, administrative capabilities,
 * per-tenant overrides of the configurable roles, and the platform's reserved
 * identities. Services load the attributes (the patient, their consents, the
 * tenant's overrides: see access-policy.service.ts) and ask; nothing else
 * tests role names. docs/security.md renders these tables (npm run docs:policy).
 */

export type { Action };

export const DATA_AREAS = ['encounter', 'observation', 'order', 'document'] as const;
export type DataArea = (typeof DATA_AREAS)[number];
export const ACCESS_AREAS = ['demographics', 'appointment', 'consent', ...DATA_AREAS] as const;
export type AccessArea = (typeof ACCESS_AREAS)[number];

export const CONSENT_PURPOSES = ['messaging', 'data_sharing', 'research', 'ai_assistance'] as const;
export type ConsentPurpose = (typeof CONSENT_PURPOSES)[number];
/** Without a consent record: messaging is part of care (opt-out); everything else needs an explicit grant (opt-in). */
export const CONSENT_DEFAULTS: Record<ConsentPurpose, boolean> = { messaging: true, data_sharing: false, research: false, ai_assistance: false };

/** Staff roles whose grants a tenant admin may override (setAccessPolicy); the others are fixed. */
export const CONFIGURABLE_ROLES = ['clinician', 'nurse', 'receptionist', 'integration'] as const;
export type ConfigurableRole = (typeof CONFIGURABLE_ROLES)[number];

/** Whose records a role reaches: every patient's of the tenant, only the caller's own (the token's patientId), or none. */
type Reach = 'tenant' | 'own record' | 'none';

interface RoleRule {
  reach: Reach;
  grants: Record<AccessArea, Grant>;
}

const row = (g: Grant[]): Record<AccessArea, Grant> => Object.fromEntries(ACCESS_AREAS.map((area, i) => [area, g[i]])) as Record<AccessArea, Grant>;

/** Role × area defaults. Columns: demographics, appointment, consent, encounter, observation, order, document. */
const ROLE_RULES: Record<Role, RoleRule> = {
  admin: { reach: 'tenant', grants: row(['rw', 'rw', 'rw', 'rw', 'rw', 'rw', 'rw']) },
  clinician: { reach: 'tenant', grants: row(['rw', 'rw', 'rw', 'rw', 'rw', 'rw', 'rw']) },
  nurse: { reach: 'tenant', grants: row(['r', 'r', 'r', 'rw', 'rw', 'r', 'r']) },
  receptionist: { reach: 'tenant', grants: row(['rw', 'rw', 'rw', '-', '-', '-', '-']) },
  // Exchange partners: clinical reads only with the patient's data-sharing consent (CONSENT_RULES).
  integration: { reach: 'tenant', grants: row(['r', 'r', 'r', 'r', 'rw', 'r', 'r']) },
  patient: { reach: 'own record', grants: row(['rw', 'r', 'rw', 'r', 'r', 'r', 'r']) },
  // Organisation context only (no patient data); tenant management is outside the clinical record.
  support: { reach: 'none', grants: row(['-', '-', '-', '-', '-', '-', '-']) },
  platform_admin: { reach: 'none', grants: row(['-', '-', '-', '-', '-', '-', '-']) },
};

/** Reads that need the patient's consent besides the role's grant, decided per patient. */
const CONSENT_RULES: ReadonlyArray<{ role: Role; action: Action; areas: readonly AccessArea[]; purpose: ConsentPurpose }> = [
  { role: 'integration', action: 'read', areas: DATA_AREAS, purpose: 'data_sharing' },
];

/**
 * AI agents (identity.agent: calls through the MCP server, and every call of a
 * token whose client is an AI agent, see asPolicyCaller) read a patient's
 * clinical data only with the patient's ai_assistance consent, whatever their
 * role allows; the clinical context asks it for every section.
 */
const AGENT_CONSENT = { areas: DATA_AREAS, purpose: 'ai_assistance' } as const satisfies { areas: readonly AccessArea[]; purpose: ConsentPurpose };

/**
 * What of a clinical context is shown beyond coded data: contact details
 * (phone, e-mail) and free text (notes, reasons, conclusions, instructions).
 * A role not listed gets them redacted; an agent also needs the consent above.
 */
const DISCLOSURE_RULES = {
  contactDetails: { roles: ['admin', 'clinician', 'nurse', 'receptionist', 'patient'], what: 'phone and e-mail' },
  freeText: { roles: ['admin', 'clinician', 'nurse', 'patient'], what: 'note texts, encounter reasons, lab conclusions, medication instructions' },
} as const satisfies Record<string, { roles: readonly Role[]; what: string }>;
export type Disclosure = Record<keyof typeof DISCLOSURE_RULES, boolean>;

const rolesReaching = (reach: Reach) => ROLES.filter((role) => ROLE_RULES[role].reach === reach);
/** Roles that work across the tenant's patients. */
const TENANT_ROLES = rolesReaching('tenant');

interface CapabilityRule {
  roles: readonly Role[];
  /** Also allowed to a caller on their own record (roles that reach their own record). */
  ownRecord?: boolean;
  what: string;
}

/** Administrative capabilities outside the role × area matrix; not configurable per tenant. */
const CAPABILITIES = {
  manageAccessPolicy: { roles: ['admin'], what: "read and change the tenant's access policy" },
  readAudit: { roles: ['admin'], what: 'read and verify the audit trail' },
  readAccessLog: { roles: ['admin'], ownRecord: true, what: "read who accessed a patient's record" },
  reviewAccessLog: {
    roles: ['admin'],
    what: "review the tenant's access log (flags, marking entries reviewed, the periodic report) and its consents, restrictions and legal holds",
  },
  readPopulationQueries: { roles: ['admin'], what: "read which population statistics were computed over the tenant's records" },
  manageTemplates: { roles: ['admin'], what: 'upload clinical templates' },
  manageStoredQueries: { roles: ['admin'], what: 'store (register) AQL queries for the tenant' },
  changeEhrStatus: { roles: ['admin', 'clinician'], what: 'change an EHR status' },
  publishDocuments: { roles: ['admin', 'clinician'], what: "publish a patient's CCD to the external XDS repository (ITI-41 as Document Source)" },
  listPatients: { roles: TENANT_ROLES, what: 'list and search patients and schedules across the tenant' },
  registerPatients: { roles: TENANT_ROLES, what: 'register patients' },
  editAllDemographics: { roles: TENANT_ROLES, what: 'change any demographic field (a patient changes only their contact details)' },
  manageDataSubjectRights: { roles: ['admin'], what: 'restrict a record, set a legal hold and the retention periods (GDPR art. 17/18)' },
  listLegalHolds: { roles: ['admin'], what: "list the tenant's patients under legal hold (whose data outlives its retention period)" },
  readForSubjectAccess: {
    roles: ['admin'],
    ownRecord: true,
    what: "read a restricted record for the patient's subject access export (GDPR art. 15: the right of access survives restriction)",
  },
} as const satisfies Record<string, CapabilityRule>;
export type Capability = keyof typeof CAPABILITIES;

/**
 * The platform's own components, by reserved subject (a client token never
 * carries one). Their grants are fixed: roles, capabilities and tenant overrides do not apply.
 */
const RESERVED_IDENTITIES: Record<string, { grants: Record<AccessArea, Grant>; capabilities: readonly Capability[]; what: string }> = {
  [SYSTEM_SUBJECTS.messagingService]: {
    grants: row(['r', 'rw', 'r', '-', '-', '-', '-']),
    // Its retention purge keeps the messaging data of patients under legal hold.
    capabilities: ['listLegalHolds'],
    what: "the messaging service: contact details and appointments for reminders, consents; confirms or cancels an appointment on the patient's SMS reply; which patients are under legal hold",
  },
};

/** The reserved identity a subject names, if any (own properties only: a subject like `constructor` is no identity). */
function reservedIdentity(sub: string) {
  return Object.hasOwn(RESERVED_IDENTITIES, sub) ? RESERVED_IDENTITIES[sub] : undefined;
}

export interface PolicyOverride {
  role: ConfigurableRole;
  area: AccessArea;
  canRead: boolean;
  canWrite: boolean;
}

export interface Target {
  /** The patient whose record is addressed; undefined for tenant-wide lists. */
  patientId?: string;
  /** The patient's current consents (needed where CONSENT_RULES apply). */
  consents?: Partial<Record<ConsentPurpose, boolean>>;
  /** The patient's record is restricted (GDPR art. 18): nobody processes it until its deletion. */
  restricted?: boolean;
}

export interface Decision {
  allowed: boolean;
  /** Deny as NOT_FOUND rather than FORBIDDEN: the caller must not learn the record exists. */
  hide: boolean;
  reason: string;
  /** Of an allowed decision: the grounds the access log records (AccessGrounds). */
  grounds?: AccessGrounds;
}

/**
 * On what grounds an allowed access is made (NEN 7513): the role's grant within the organisation that treats the
 * patient (`treatment`: the tenant is the care provider; CareGraph keeps no per-patient care team), the patient's
 * consent a rule asked for (`consent:<purpose>`), the caller's own record (`own-record`), the patient's right of
 * access (`subject-access`), or a platform component's fixed grants (`service`).
 */
export type AccessGrounds = 'treatment' | `consent:${ConsentPurpose}` | 'own-record' | 'subject-access' | 'service';

const allow = (reason: string, grounds: AccessGrounds): Decision => ({ allowed: true, hide: false, reason, grounds });

function consentGiven(consents: Target['consents'], purpose: ConsentPurpose): boolean {
  return consents?.[purpose] ?? CONSENT_DEFAULTS[purpose];
}

function isConfigurable(role: Role): role is ConfigurableRole {
  return (CONFIGURABLE_ROLES as readonly Role[]).includes(role);
}

/** The effective role × area grant, the tenant's overrides applied to configurable roles. */
export function effectiveGrant(role: Role, area: AccessArea, overrides: PolicyOverride[] = []): { read: boolean; write: boolean } {
  const override = isConfigurable(role) ? overrides.find((o) => o.role === role && o.area === area) : undefined;
  if (override) return { read: override.canRead, write: override.canWrite };
  const grant = ROLE_RULES[role].grants[area];
  return { read: grants(grant, 'read'), write: grants(grant, 'write') };
}

/** Whether any part of the caller's access reaches this patient's record (else a denial hides the record). */
function reaches(identity: Identity, patientId: string | undefined): boolean {
  return identity.roles.some((role) => {
    const { reach } = ROLE_RULES[role];
    return reach === 'tenant' || (reach === 'own record' && patientId !== undefined && patientId === identity.patientId);
  });
}

export function decide(identity: Identity, action: Action, area: AccessArea, target: Target = {}, overrides: PolicyOverride[] = []): Decision {
  // The right of access survives restriction (GDPR art. 15): a subject access export still reads the record, as its requester.
  const subjectAccess = identity.subjectAccess === true && action === 'read' && can(identity, 'readForSubjectAccess', target);
  if (target.restricted && !subjectAccess) {
    return {
      allowed: false,
      // The platform's components (messaging) do not learn of the record at all; staff who reach it are told why.
      hide: !!reservedIdentity(identity.sub) || !reaches(identity, target.patientId),
      reason: "the patient's record is restricted (GDPR art. 18): it is kept but not processed",
    };
  }
  const reserved = reservedIdentity(identity.sub);
  const outOfScope = !reserved && scopeProblem(identity, action, area, target);
  // Another patient than a patient/ scope's is beyond the token's reach: hidden, as any record the caller does not reach.
  if (outOfScope) return { allowed: false, hide: !reachesInScope(identity, target.patientId), reason: outOfScope };
  if (reserved) {
    return grants(reserved.grants[area], action)
      ? allow(identity.sub, 'service')
      : { allowed: false, hide: false, reason: `${identity.sub} may not ${action} ${area} data` };
  }
  const reasons: string[] = [];
  for (const role of identity.roles) {
    const { reach } = ROLE_RULES[role];
    if (reach === 'none') {
      reasons.push(`role ${role} reaches no patient records`);
      continue;
    }
    if (reach === 'own record' && (!target.patientId || target.patientId !== identity.patientId)) {
      reasons.push(`role ${role} reaches only the caller's own record`);
      continue;
    }
    if (!effectiveGrant(role, area, overrides)[action]) {
      reasons.push(`role ${role} may not ${action} ${area} data`);
      continue;
    }
    const agentRead = !!identity.agent && action === 'read' && (AGENT_CONSENT.areas as readonly AccessArea[]).includes(area);
    if (agentRead) {
      const problem = agentConsentProblem(identity, target);
      if (problem) {
        reasons.push(problem);
        continue;
      }
    }
    const consent = CONSENT_RULES.find((r) => r.role === role && r.action === action && r.areas.includes(area));
    if (consent) {
      if (!target.patientId) {
        reasons.push(`role ${role} may ${action} ${area} data only per patient, with their ${consent.purpose} consent`);
        continue;
      }
      if (!consentGiven(target.consents, consent.purpose)) {
        reasons.push(`the patient has not consented to ${consent.purpose}`);
        continue;
      }
    }
    const purpose = consent?.purpose ?? (agentRead ? AGENT_CONSENT.purpose : undefined);
    const grounds: AccessGrounds = subjectAccess ? 'subject-access' : purpose ? `consent:${purpose}` : reach === 'own record' ? 'own-record' : 'treatment';
    return allow(`role ${role}`, grounds);
  }
  return { allowed: false, hide: !reaches(identity, target.patientId), reason: reasons.join('; ') || 'no role grants this' };
}

/** The FHIR resource type a SMART scope names for each area's data. */
const SCOPE_TYPE: Record<AccessArea, string> = {
  demographics: 'Patient',
  appointment: 'Appointment',
  consent: 'Consent',
  encounter: 'Encounter',
  observation: 'Observation',
  order: 'MedicationRequest',
  document: 'DocumentReference',
};

/** Whether a token with patient/ scopes only may know of the patient at all (the token's own); true without scopes. */
function reachesInScope(identity: Identity, patientId: string | undefined): boolean {
  if (identity.scope === undefined || patientId === undefined) return true;
  const scopes = resourceScopes(identity.scope);
  return scopes.some((s) => s.context !== 'patient') || patientId === identity.patientId;
}

/**
 * Why a token's SMART scopes (its `scope` claim) do not allow an action on an area's data; undefined when they do
 * or when the token has none. Scopes only narrow what the roles grant. A `patient/` scope reaches the token's
 * patient (its patientId) only, so a read that names no patient (a list across patients) is outside it.
 */
function scopeProblem(identity: Identity, action: Action, area: AccessArea, target: Target): string | undefined {
  if (identity.scope === undefined) return undefined;
  const type = SCOPE_TYPE[area];
  const fits = resourceScopes(identity.scope).some(
    (s) =>
      (s.resourceType === '*' || s.resourceType === type) &&
      (action === 'read' ? s.read : s.write) &&
      (s.context !== 'patient' || (identity.patientId !== undefined && target.patientId === identity.patientId)),
  );
  return fits
    ? undefined
    : `the token's scopes do not allow ${action === 'read' ? 'reading' : 'writing'} ${type}${target.patientId ? ` of patient ${target.patientId}` : ''}`;
}

/**
 * The grounds of a read the policy point allowed, for the access log: its decision for the entry's patient and
 * data category, with the consent its rules asked for taken as given (the read was allowed, so it was) and without
 * the tenant's overrides, which only staff roles take: a read one granted counts as `treatment`.
 */
export function readGrounds(identity: Identity, area: AccessArea, patientId: string | null): AccessGrounds {
  const consents = Object.fromEntries(CONSENT_PURPOSES.map((purpose) => [purpose, true]));
  return decide(identity, 'read', area, { ...(patientId ? { patientId } : {}), consents }).grounds ?? 'treatment';
}

/** The purpose of use (HL7 v3 PurposeOfUse) a read is logged with when its caller declared none: what its grounds imply. */
export function impliedPurpose(grounds: AccessGrounds): string {
  if (grounds === 'own-record' || grounds === 'subject-access') return PURPOSES_OF_USE.patient_requested;
  if (grounds === 'service') return PURPOSES_OF_USE.operations;
  return PURPOSES_OF_USE.treatment;
}

/** The OAuth clients that are AI agents: `*` every client a token names, else those listed (AI_AGENT_CLIENTS). */
export type AgentClients = '*' | readonly string[];

/**
 * The caller the rules above judge. Being an AI agent is a property of the caller, not of the door: /mcp
 * marks its calls itself, and a token whose OAuth client is an AI agent is one on every other surface too
 * (GraphQL, FHIR, openEHR, the clinical REST adapter, CDA/XDS), so skipping /mcp does not skip the consent. A token that
 * names no client, or a client not listed, keeps the rules of its roles.
 */
export function asPolicyCaller(identity: Identity, agentClients: AgentClients): Identity {
  if (identity.agent || identity.clientId === undefined) return identity;
  if (agentClients !== '*' && !agentClients.includes(identity.clientId)) return identity;
  return { ...identity, agent: { client: identity.clientId } };
}

/** Why an AI agent may not read this patient's data (undefined: it may, or the caller is no agent). */
function agentConsentProblem(identity: Identity, target: Target): string | undefined {
  if (!identity.agent) return undefined;
  if (!target.patientId) return `AI agents read clinical data only per patient, with their ${AGENT_CONSENT.purpose.toUpperCase()} consent`;
  if (!consentGiven(target.consents, AGENT_CONSENT.purpose))
    return `the patient has not given ${AGENT_CONSENT.purpose.toUpperCase()} consent, which AI agents need to read their record`;
  return undefined;
}

/** FORBIDDEN naming the missing consent when an agent lacks the patient's ai_assistance consent. */
export function assertAgentConsent(identity: Identity, target: Target): void {
  const problem = agentConsentProblem(identity, target);
  if (problem)
    throw new AppError('FORBIDDEN', `Not allowed: ${problem}`, [{ path: 'consent', message: `${AGENT_CONSENT.purpose.toUpperCase()} consent required` }]);
}

/** Which of contact details and free text this caller sees for the patient (DISCLOSURE_RULES). */
export function disclosure(identity: Identity, target: Target): Disclosure {
  const agentAllowed = agentConsentProblem(identity, target) === undefined;
  const allows = (roles: readonly Role[]) => agentAllowed && identity.roles.some((role) => roles.includes(role));
  return { contactDetails: allows(DISCLOSURE_RULES.contactDetails.roles), freeText: allows(DISCLOSURE_RULES.freeText.roles) };
}

export function deniedError(decision: Decision, patientId: string | undefined): AppError {
  if (decision.hide) return new AppError('NOT_FOUND', patientId ? `Patient '${patientId}' was not found` : 'Not found');
  return new AppError('FORBIDDEN', `Not allowed: ${decision.reason}`);
}

export function assertAllowed(identity: Identity, action: Action, area: AccessArea, target: Target = {}, overrides: PolicyOverride[] = []): void {
  const decision = decide(identity, action, area, target, overrides);
  if (!decision.allowed) throw deniedError(decision, target.patientId);
}

export function can(identity: Identity, capability: Capability, target: { patientId?: string } = {}): boolean {
  const reserved = reservedIdentity(identity.sub);
  if (reserved) return reserved.capabilities.includes(capability);
  if (identity.scope !== undefined && !scopeAllowsCapability(identity, capability, target)) return false;
  const rule: CapabilityRule = CAPABILITIES[capability];
  if (identity.roles.some((role) => rule.roles.includes(role))) return true;
  return (
    !!rule.ownRecord &&
    target.patientId !== undefined &&
    identity.roles.some((r) => ROLE_RULES[r].reach === 'own record') &&
    identity.patientId === target.patientId
  );
}

/** Capabilities that read one FHIR resource type: a scope on it allows them (a patient/ scope for its own patient). */
const CAPABILITY_SCOPE_TYPE: Partial<Record<Capability, string>> = { readAccessLog: 'AuditEvent', readAudit: 'AuditEvent' };

/**
 * Whether a scoped token's scopes allow a capability: one that reads a resource type needs a read scope on it; the
 * others administer the record beyond any one type, so they need a `user/*` or `system/*` scope that reads and writes.
 */
function scopeAllowsCapability(identity: Identity, capability: Capability, target: { patientId?: string }): boolean {
  const type = CAPABILITY_SCOPE_TYPE[capability];
  return resourceScopes(identity.scope ?? '').some((s) =>
    type
      ? (s.resourceType === '*' || s.resourceType === type) &&
        s.read &&
        (s.context !== 'patient' || (identity.patientId !== undefined && target.patientId === identity.patientId))
      : s.resourceType === '*' && s.context !== 'patient' && s.read && s.write,
  );
}

/** FORBIDDEN, or NOT_FOUND when the caller does not reach the patient the capability is about. */
export function assertCan(identity: Identity, capability: Capability, target: { patientId?: string } = {}): void {
  if (can(identity, capability, target)) return;
  const rule: CapabilityRule = CAPABILITIES[capability];
  const decision = {
    allowed: false,
    hide: target.patientId !== undefined && !reaches(identity, target.patientId),
    reason: `only ${rule.roles.join(' or ')} may ${rule.what}`,
  };
  throw deniedError(decision, target.patientId);
}

/** Whether any part of the caller's access reaches patient records at all (support and platform_admin reach none). */
export function reachesRecords(identity: Identity): boolean {
  return !!reservedIdentity(identity.sub) || identity.roles.some((role) => ROLE_RULES[role].reach !== 'none');
}

/**
 * FORBIDDEN for a caller whose roles reach no patient records. The FHIR API
 * serves nothing but patient data, so it refuses such a caller outright
 * rather than answer searches with empty Bundles, as if no record existed.
 */
export function assertReachesRecords(identity: Identity): void {
  if (!reachesRecords(identity)) throw new AppError('FORBIDDEN', `Not allowed: role ${identity.roles.join(', ')} reaches no patient records`);
}

/**
 * The part of the tenant a tenant-wide read covers: every patient's records
 * (undefined) or only the caller's own (their patient id); FORBIDDEN for a
 * caller who reaches no patient records.
 */
export function recordScope(identity: Identity): string | undefined {
  if (reservedIdentity(identity.sub) || can(identity, 'listPatients')) return undefined;
  if (identity.patientId !== undefined && identity.roles.some((role) => ROLE_RULES[role].reach === 'own record')) return identity.patientId;
  throw new AppError('FORBIDDEN', `Not allowed: role ${identity.roles.join(', ')} reaches no patient records`);
}

/** The tables above as Markdown, for docs/security.md. */
export function renderRules(): string {
  const matrixRows = ROLES.map((role) => {
    const rule = ROLE_RULES[role];
    const cells = ACCESS_AREAS.map((area) => {
      const g = grantOf(grants(rule.grants[area], 'read'), grants(rule.grants[area], 'write'));
      const consent = CONSENT_RULES.find((c) => c.role === role && c.areas.includes(area) && grants(g, c.action));
      return consent ? `${g} (${consent.action} needs ${consent.purpose} consent)` : g;
    });
    return [role + (isConfigurable(role) ? ' *' : ''), rule.reach, ...cells];
  });
  const reservedRows = Object.entries(RESERVED_IDENTITIES).map(([sub, r]) => [`\`${sub}\``, 'tenant', ...ACCESS_AREAS.map((area) => r.grants[area])]);
  const capabilityRows = Object.entries(CAPABILITIES).map(([name, rule]: [string, CapabilityRule]) => [
    `\`${name}\``,
    rule.what,
    [
      rule.roles.join(', ') + (rule.ownRecord ? '; a patient for their own record' : ''),
      ...Object.entries(RESERVED_IDENTITIES)
        .filter(([, reserved]) => reserved.capabilities.includes(name as Capability))
        .map(([sub]) => `\`${sub}\``),
    ].join('; '),
  ]);
  return [
    '**Clinical record** (`subgraphs/ehr/policy/rules.ts`). `r` read, `rw` read and write, `-` nothing; * = a tenant admin may override the grant (`setAccessPolicy`).',
    '',
    markdownTable(['role', 'reaches', ...ACCESS_AREAS], [...matrixRows, ...reservedRows]),
    '',
    markdownTable(['capability', 'allows', 'roles'], capabilityRows),
  ].join('\n');
}
