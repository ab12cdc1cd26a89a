import type { Identity, Role } from '../../../common/auth/principal';
import { ALL_TENANTS, SYSTEM_SUBJECTS } from '../../../common/auth/system-identities';
import { actsInAllTenants, allowed, assertAllowed, can, canSeeEvent, readScope } from './rules';

const who = (roles: Role[], patientId?: string, sub = 'u', tenantId = 'demo'): Identity => ({ sub, tenantId, roles, patientId });
const event = (type: string, patientId?: string, tenantId = 'demo') => ({ tenantId, type, data: patientId ? { patientId } : {} }) as never;

describe('messaging policy', () => {
  it('lets staff send and read every patient, a patient read only their own messages', () => {
    for (const role of ['admin', 'clinician', 'nurse', 'receptionist', 'integration'] as Role[]) {
      expect(allowed(who([role]), 'write', 'message')).toBe(true);
      expect(readScope(who([role]), 'message')).toBeUndefined();
    }
    const patient = who(['patient'], 'p-1');
    expect(readScope(patient, 'message')).toBe('p-1');
    expect(allowed(patient, 'write', 'message')).toBe(false);
    expect(() => assertAllowed(patient, 'write', 'preferences', 'p-2')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(() => assertAllowed(patient, 'write', 'preferences', 'p-1')).not.toThrow();
  });

  it('keeps support and platform_admin away from message bodies, settings and events', () => {
    for (const role of ['support', 'platform_admin'] as Role[]) {
      for (const area of ['message', 'preferences', 'webhook'] as const) {
        expect(allowed(who([role]), 'read', area, 'p-1')).toBe(false);
        expect(allowed(who([role]), 'write', area, 'p-1')).toBe(false);
      }
      expect(() => readScope(who([role]), 'message')).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
      expect(canSeeEvent(who([role]), event('message.response', 'p-1'))).toBe(false);
      expect(canSeeEvent(who([role]), event('webhook.disabled'))).toBe(false);
    }
    expect(allowed(who(['support']), 'read', 'template')).toBe(true);
    expect(allowed(who(['platform_admin']), 'read', 'template')).toBe(false);
  });

  it('filters events by tenant, patient and the alert capability', () => {
    expect(canSeeEvent(who(['nurse']), event('message.delivered', 'p-9'))).toBe(true);
    expect(canSeeEvent(who(['nurse']), event('message.delivered', 'p-9', 'acme'))).toBe(false);
    expect(canSeeEvent(who(['patient'], 'p-1'), event('appointment.confirmed', 'p-1'))).toBe(true);
    expect(canSeeEvent(who(['patient'], 'p-1'), event('appointment.confirmed', 'p-2'))).toBe(false);
    expect(canSeeEvent(who(['integration']), event('webhook.disabled'))).toBe(false);
    expect(canSeeEvent(who(['admin']), event('webhook.disabled'))).toBe(true);
  });

  it('gives the SMS provider only its webhooks, in every tenant, and only with the wildcard tenant', () => {
    const provider = who([], undefined, SYSTEM_SUBJECTS.smsProvider, ALL_TENANTS);
    expect(can(provider, 'receiveInboundSms')).toBe(true);
    expect(can(provider, 'reportDeliveryStatus')).toBe(true);
    expect(actsInAllTenants(provider)).toBe(true);
    expect(allowed({ ...provider, roles: ['integration'] }, 'write', 'message')).toBe(false);
    const inOneTenant = who(['integration'], undefined, SYSTEM_SUBJECTS.smsProvider, 'demo');
    expect(can(inOneTenant, 'reportDeliveryStatus')).toBe(false);
    expect(actsInAllTenants(inOneTenant)).toBe(false);
    expect(can(who(['admin']), 'reportDeliveryStatus')).toBe(false);
  });
});
