import type { Identity, Role } from '../../../common/auth/principal';
import { AppError } from '../../../common/errors';
import { SYSTEM_SUBJECTS } from '../../../common/auth/system-identities';
import {
  ACCESS_AREAS,
  asPolicyCaller,
  assertAgentConsent,
  assertAllowed,
  assertCan,
  assertReachesRecords,
  can,
  decide,
  disclosure,
  effectiveGrant,
  recordScope,
} from './rules';

const who = (roles: Role[], patientId?: string, sub = 'u'): Identity => ({ sub, tenantId: 'demo', roles, patientId });

describe('AI agents (MCP calls)', () => {
  const agent = (roles: Role[]): Identity => ({ ...who(roles), agent: { client: 'c', tool: 'patient_summary', purpose: 'TREAT' } });

  it('read clinical data only with the patient’s ai_assistance consent, whatever the role allows', () => {
    expect(decide(agent(['clinician']), 'read', 'observation', { patientId: 'p-1' })).toMatchObject({
      allowed: false,
      hide: false,
      reason: expect.stringContaining('AI_ASSISTANCE consent'),
    });
    expect(decide(agent(['clinician']), 'read', 'observation', { patientId: 'p-1', consents: { ai_assistance: true } }).allowed).toBe(true);
    expect(decide(agent(['clinician']), 'read', 'observation', { consents: { ai_assistance: true } }).allowed).toBe(false);
    expect(decide(agent(['receptionist']), 'read', 'observation', { patientId: 'p-1', consents: { ai_assistance: true } }).allowed).toBe(false);
    // The same role without an agent needs no such consent.
    expect(decide(who(['clinician']), 'read', 'observation', { patientId: 'p-1' }).allowed).toBe(true);
    expect(() => assertAgentConsent(agent(['admin']), { patientId: 'p-1', consents: { ai_assistance: false } })).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN', details: [{ path: 'consent', message: 'AI_ASSISTANCE consent required' }] }),
    );
  });

  it('see contact details and free text only as the disclosure rules allow', () => {
    const consented = { patientId: 'p-1', consents: { ai_assistance: true } };
    expect(disclosure(agent(['nurse']), consented)).toEqual({ contactDetails: true, freeText: true });
    expect(disclosure(agent(['receptionist']), consented)).toEqual({ contactDetails: true, freeText: false });
    expect(disclosure(agent(['integration']), consented)).toEqual({ contactDetails: false, freeText: false });
    expect(disclosure(agent(['clinician']), { patientId: 'p-1' })).toEqual({ contactDetails: false, freeText: false });
    expect(disclosure(who(['clinician']), { patientId: 'p-1' })).toEqual({ contactDetails: true, freeText: true });
  });
});

describe('which callers are AI agents (the token’s client, not the surface)', () => {
  const withClient = (clientId: string): Identity => ({ ...who(['clinician']), clientId });
  const withoutConsent = { patientId: 'p-1' };

  it('holds every client a token names to the agent rules by default, a listed client when the operator lists them', () => {
    expect(decide(asPolicyCaller(withClient('copilot'), '*'), 'read', 'observation', withoutConsent).allowed).toBe(false);
    expect(decide(asPolicyCaller(withClient('copilot'), ['copilot', 'claude-desktop']), 'read', 'observation', withoutConsent).allowed).toBe(false);
    expect(asPolicyCaller(withClient('copilot'), '*').agent).toEqual({ client: 'copilot' });
  });

  it('keeps the role’s rules for a token without a client, or whose client is not listed', () => {
    expect(asPolicyCaller(who(['clinician']), '*')).toEqual(who(['clinician']));
    expect(decide(asPolicyCaller(withClient('ward-web-app'), ['copilot']), 'read', 'observation', withoutConsent).allowed).toBe(true);
    expect(decide(asPolicyCaller(withClient('ward-web-app'), []), 'read', 'observation', withoutConsent).allowed).toBe(true);
  });

  it('leaves a call through /mcp an agent with its tool and purpose, whatever the list', () => {
    const mcp: Identity = { ...withClient('ward-web-app'), agent: { client: 'ward-web-app', tool: 'patient_summary', purpose: 'TREAT' } };
    expect(asPolicyCaller(mcp, [])).toBe(mcp);
  });
});

describe('restricted records (GDPR art. 18)', () => {
  const restricted = { patientId: 'p-1', restricted: true };
  const forExport = (identity: Identity): Identity => ({ ...identity, subjectAccess: true });

  it('are read for a subject access export by the admin or the patient themself, and processed by nobody else', () => {
    expect(decide(who(['admin']), 'read', 'observation', restricted)).toMatchObject({ allowed: false, reason: expect.stringContaining('restricted') });
    expect(decide(forExport(who(['admin'])), 'read', 'observation', restricted).allowed).toBe(true);
    expect(decide(forExport(who(['patient'], 'p-1')), 'read', 'demographics', restricted).allowed).toBe(true);
    // Another patient, a nurse, a write, or the messaging service: still refused, flag or not.
    expect(decide(forExport(who(['patient'], 'p-2')), 'read', 'demographics', restricted).allowed).toBe(false);
    expect(decide(forExport(who(['nurse'])), 'read', 'observation', restricted).allowed).toBe(false);
    expect(decide(forExport(who(['admin'])), 'write', 'observation', restricted).allowed).toBe(false);
    expect(decide(forExport({ sub: SYSTEM_SUBJECTS.messagingService, tenantId: 'demo', roles: [] }), 'read', 'demographics', restricted)).toMatchObject({
      allowed: false,
      hide: true,
    });
  });

  it('lists patients under legal hold only for the admin and the messaging service', () => {
    expect(can(who(['admin']), 'listLegalHolds')).toBe(true);
    expect(can({ sub: SYSTEM_SUBJECTS.messagingService, tenantId: 'demo', roles: [] }, 'listLegalHolds')).toBe(true);
    expect(can({ sub: SYSTEM_SUBJECTS.messagingService, tenantId: 'demo', roles: [] }, 'readAudit')).toBe(false);
    expect(can(who(['clinician']), 'listLegalHolds')).toBe(false);
  });
});

describe('clinical access policy', () => {
  it('lets admins and clinicians read and write clinical data', () => {
    for (const role of ['admin', 'clinician'] as Role[]) {
      expect(decide(who([role]), 'write', 'document', { patientId: 'p-1' }).allowed).toBe(true);
      expect(decide(who([role]), 'read', 'order', { patientId: 'p-1' }).allowed).toBe(true);
    }
  });

  it('lets nurses record observations but not write orders', () => {
    expect(decide(who(['nurse']), 'write', 'observation', { patientId: 'p-1' }).allowed).toBe(true);
    const order = decide(who(['nurse']), 'write', 'order', { patientId: 'p-1' });
    expect(order).toMatchObject({ allowed: false, hide: false });
  });

  it('keeps receptionists out of clinical content but lets them keep demographics', () => {
    expect(decide(who(['receptionist']), 'read', 'observation', { patientId: 'p-1' }).allowed).toBe(false);
    expect(decide(who(['receptionist']), 'write', 'demographics', { patientId: 'p-1' }).allowed).toBe(true);
  });

  it('[SEC-007] shows a patient only their own record, hiding others as not found', () => {
    const patient = who(['patient'], 'p-1');
    expect(decide(patient, 'read', 'observation', { patientId: 'p-1' }).allowed).toBe(true);
    expect(decide(patient, 'write', 'observation', { patientId: 'p-1' })).toMatchObject({ allowed: false, hide: false });
    expect(decide(patient, 'read', 'demographics', { patientId: 'p-2' })).toMatchObject({ allowed: false, hide: true });
    expect(decide(patient, 'read', 'observation', {})).toMatchObject({ allowed: false, hide: true });
    expect(() => assertAllowed(patient, 'read', 'demographics', { patientId: 'p-2' })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });

  it('refuses every processing of a restricted record: staff are told why, other callers and the messaging service see no record', () => {
    const restricted = { patientId: 'p-1', restricted: true };
    for (const role of ['admin', 'clinician', 'nurse'] as Role[]) {
      expect(decide(who([role]), 'read', 'demographics', restricted)).toMatchObject({ allowed: false, hide: false });
      expect(decide(who([role]), 'write', 'observation', restricted)).toMatchObject({ allowed: false, hide: false });
    }
    expect(decide(who(['patient'], 'p-2'), 'read', 'demographics', restricted)).toMatchObject({ allowed: false, hide: true });
    expect(decide(who([], undefined, SYSTEM_SUBJECTS.messagingService), 'read', 'demographics', restricted)).toMatchObject({ allowed: false, hide: true });
    expect(() => assertAllowed(who(['admin']), 'read', 'demographics', restricted)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
    expect(decide(who(['admin']), 'read', 'demographics', { patientId: 'p-1', restricted: false }).allowed).toBe(true);
  });

  it('lets integrations read clinical data only with data-sharing consent, per patient', () => {
    const integration = who(['integration']);
    expect(decide(integration, 'read', 'document', { patientId: 'p-1' }).allowed).toBe(false);
    expect(decide(integration, 'read', 'document', { patientId: 'p-1', consents: { data_sharing: true } }).allowed).toBe(true);
    expect(decide(integration, 'read', 'document', { consents: { data_sharing: true } }).allowed).toBe(false);
    expect(decide(integration, 'read', 'demographics', { patientId: 'p-1' }).allowed).toBe(true);
  });

  it('[SEC-006] applies tenant overrides to staff roles only', () => {
    const overrides = [{ role: 'receptionist' as const, area: 'document' as const, canRead: true, canWrite: false }];
    expect(decide(who(['receptionist']), 'read', 'document', { patientId: 'p-1' }, overrides).allowed).toBe(true);
    expect(effectiveGrant('nurse', 'observation', [{ role: 'nurse', area: 'observation', canRead: true, canWrite: false }])).toEqual({
      read: true,
      write: false,
    });
  });

  it('reserves access-policy changes and the audit trail to admins', () => {
    expect(can(who(['admin']), 'manageAccessPolicy')).toBe(true);
    for (const role of ['nurse', 'clinician', 'receptionist', 'integration', 'patient'] as Role[]) {
      expect(can(who([role], 'p-1'), 'manageAccessPolicy')).toBe(false);
      expect(can(who([role], 'p-1'), 'readAudit')).toBe(false);
    }
    expect(() => assertCan(who(['nurse']), 'manageAccessPolicy')).toThrow(AppError);
  });

  it('[SEC-008] gives support and platform_admin no patient data at all, and no tenant-wide lists', () => {
    for (const role of ['support', 'platform_admin'] as Role[]) {
      for (const area of ACCESS_AREAS) {
        for (const action of ['read', 'write'] as const) {
          expect(decide(who([role]), action, area, { patientId: 'p-1', consents: { data_sharing: true } })).toMatchObject({ allowed: false, hide: true });
        }
      }
      expect(() => recordScope(who([role]))).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
      expect(can(who([role]), 'listPatients')).toBe(false);
      // Surfaces of nothing but patient data (FHIR) refuse them outright.
      expect(() => assertReachesRecords(who([role]))).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
    }
    for (const caller of [
      who(['nurse']),
      who(['patient'], 'p-1'),
      who(['support', 'receptionist']),
      who(['integration'], undefined, SYSTEM_SUBJECTS.messagingService),
    ]) {
      expect(() => assertReachesRecords(caller)).not.toThrow();
    }
  });

  it('ignores tenant overrides of fixed roles', () => {
    const overrides = [{ role: 'support' as never, area: 'demographics' as const, canRead: true, canWrite: true }];
    expect(decide(who(['support']), 'read', 'demographics', { patientId: 'p-1' }, overrides).allowed).toBe(false);
  });

  it('lets the messaging service change appointments whatever its role and the overrides say, and nothing clinical', () => {
    const messaging = who(['integration'], undefined, SYSTEM_SUBJECTS.messagingService);
    const lockedOut = [{ role: 'integration' as const, area: 'appointment' as const, canRead: false, canWrite: false }];
    expect(decide(messaging, 'write', 'appointment', { patientId: 'p-1' }, lockedOut).allowed).toBe(true);
    expect(decide(messaging, 'read', 'observation', { patientId: 'p-1', consents: { data_sharing: true } }).allowed).toBe(false);
    expect(can(messaging, 'listPatients')).toBe(false);
    // Only own properties name a reserved identity.
    expect(decide(who(['patient'], 'p-1', 'constructor'), 'write', 'appointment', { patientId: 'p-1' }).allowed).toBe(false);
  });

  it('keeps appointment writes from nurses and integrations unless the tenant grants them', () => {
    for (const role of ['nurse', 'integration'] as Role[]) {
      expect(decide(who([role]), 'write', 'appointment', { patientId: 'p-1' })).toMatchObject({ allowed: false, hide: false });
    }
    const grant = [{ role: 'nurse' as const, area: 'appointment' as const, canRead: true, canWrite: true }];
    expect(decide(who(['nurse']), 'write', 'appointment', { patientId: 'p-1' }, grant).allowed).toBe(true);
  });
});

describe('SMART scopes (the scope claim) on top of the roles', () => {
  const scoped = (scope: string, roles: Role[] = ['clinician'], patientId?: string): Identity => ({ ...who(roles, patientId), scope });

  it('[SEC-018] allow what a scope names for its resource type and interaction, and nothing else', () => {
    const observations = scoped('user/Observation.rs');
    expect(decide(observations, 'read', 'observation', { patientId: 'p-1' }).allowed).toBe(true);
    expect(decide(observations, 'write', 'observation', { patientId: 'p-1' })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('writing Observation'),
    });
    expect(decide(observations, 'read', 'demographics', { patientId: 'p-1' }).allowed).toBe(false);
    expect(decide(scoped('user/MedicationRequest.cruds'), 'write', 'order', { patientId: 'p-1' }).allowed).toBe(true);
    expect(decide(scoped('user/*.cruds'), 'write', 'consent', { patientId: 'p-1' }).allowed).toBe(true);
  });

  it('[SEC-018] keep patient/ scopes to the token’s patient, hiding the others', () => {
    const own = scoped('patient/*.rs', ['clinician'], 'p-1');
    expect(decide(own, 'read', 'encounter', { patientId: 'p-1' }).allowed).toBe(true);
    expect(decide(own, 'read', 'encounter', { patientId: 'p-2' })).toMatchObject({ allowed: false, hide: true });
    // A list across patients names none: outside a patient/ scope.
    expect(decide(own, 'read', 'encounter', {}).allowed).toBe(false);
    expect(decide(scoped('patient/*.rs'), 'read', 'encounter', { patientId: 'p-1' }).allowed).toBe(false);
  });

  it('[SEC-018] never add to the roles, and leave administration to tokens scoped to every type', () => {
    expect(decide(scoped('user/*.cruds', ['receptionist']), 'read', 'observation', { patientId: 'p-1' }).allowed).toBe(false);
    expect(can(scoped('user/*.cruds', ['admin']), 'manageStoredQueries')).toBe(true);
    expect(can(scoped('user/Observation.cruds', ['admin']), 'manageStoredQueries')).toBe(false);
    expect(can(who(['admin']), 'manageStoredQueries')).toBe(true);
  });

  it('[SEC-018] let an AuditEvent scope read the access log: a patient/ one their own only', () => {
    const own = scoped('patient/AuditEvent.rs', ['patient'], 'p-1');
    expect(can(own, 'readAccessLog', { patientId: 'p-1' })).toBe(true);
    expect(can(own, 'readAccessLog', { patientId: 'p-2' })).toBe(false);
    expect(can(scoped('patient/Observation.rs', ['patient'], 'p-1'), 'readAccessLog', { patientId: 'p-1' })).toBe(false);
    expect(can(scoped('user/AuditEvent.r', ['admin']), 'readAudit')).toBe(true);
    expect(can(scoped('user/AuditEvent.r', ['admin']), 'manageAccessPolicy')).toBe(false);
  });
});
