import type { Identity, Role } from '../../common/auth/principal';
import { AppError } from '../../common/errors';
import { assertAllowed, assertCan, can, decide, staffGrant } from './access';

const who = (roles: Role[], patientId?: string): Identity => ({ sub: 'u', tenantId: 'demo', roles, patientId });

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

  it('shows a patient only their own record, hiding others as not found', () => {
    const patient = who(['patient'], 'p-1');
    expect(decide(patient, 'read', 'observation', { patientId: 'p-1' }).allowed).toBe(true);
    expect(decide(patient, 'write', 'observation', { patientId: 'p-1' })).toMatchObject({ allowed: false, hide: false });
    expect(decide(patient, 'read', 'demographics', { patientId: 'p-2' })).toMatchObject({ allowed: false, hide: true });
    expect(decide(patient, 'read', 'observation', {})).toMatchObject({ allowed: false, hide: true });
    expect(() => assertAllowed(patient, 'read', 'demographics', { patientId: 'p-2' })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });

  it('lets integrations read clinical data only with data-sharing consent, per patient', () => {
    const integration = who(['integration']);
    expect(decide(integration, 'read', 'document', { patientId: 'p-1' }).allowed).toBe(false);
    expect(decide(integration, 'read', 'document', { patientId: 'p-1', consents: { data_sharing: true } }).allowed).toBe(true);
    expect(decide(integration, 'read', 'document', { consents: { data_sharing: true } }).allowed).toBe(false);
    expect(decide(integration, 'read', 'demographics', { patientId: 'p-1' }).allowed).toBe(true);
  });

  it('applies tenant overrides to staff roles only', () => {
    const overrides = [{ role: 'receptionist' as const, area: 'document' as const, canRead: true, canWrite: false }];
    expect(decide(who(['receptionist']), 'read', 'document', { patientId: 'p-1' }, overrides).allowed).toBe(true);
    expect(staffGrant('nurse', 'observation', [{ role: 'nurse', area: 'observation', canRead: true, canWrite: false }])).toEqual({ read: true, write: false });
  });

  it('reserves access-policy changes and the audit trail to admins', () => {
    expect(can(who(['admin']), 'manageAccessPolicy')).toBe(true);
    for (const role of ['nurse', 'clinician', 'receptionist', 'integration', 'patient'] as Role[]) {
      expect(can(who([role], 'p-1'), 'manageAccessPolicy')).toBe(false);
      expect(can(who([role], 'p-1'), 'readAudit')).toBe(false);
    }
    expect(() => assertCan(who(['nurse']), 'manageAccessPolicy', 'change access policies')).toThrow(AppError);
  });
});
