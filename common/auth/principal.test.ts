import { AppError } from '../errors';
import { isReservedSubject, PLATFORM_SCOPE, resolveTenant, type Principal } from './principal';

const principal = (tenants: string[]): Principal => ({ sub: 'u', tenants, roles: ['admin'] });

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as AppError).code;
  }
  return undefined;
}

describe('resolveTenant (docs/api.md §3)', () => {
  it("uses X-Tenant-Id when it is one of the token's tenants", () => {
    expect(resolveTenant(principal(['demo', 'acme']), 'acme')).toBe('acme');
  });

  it('refuses a tenant the token does not grant', () => {
    expect(codeOf(() => resolveTenant(principal(['demo']), 'acme'))).toBe('FORBIDDEN');
  });

  it("falls back to the token's only tenant", () => {
    expect(resolveTenant(principal(['demo']), undefined)).toBe('demo');
  });

  it('needs a header when the token has several or no tenants', () => {
    expect(codeOf(() => resolveTenant(principal(['demo', 'acme']), undefined))).toBe('TENANT_REQUIRED');
    expect(codeOf(() => resolveTenant(principal([]), undefined))).toBe('TENANT_REQUIRED');
  });

  it('rejects malformed tenant ids', () => {
    expect(codeOf(() => resolveTenant(principal(['demo']), '../etc'))).toBe('VALIDATION_ERROR');
  });

  it('puts a platform admin token that grants no tenant in the platform scope, and no other token', () => {
    expect(resolveTenant({ sub: 'ops', tenants: [], roles: ['platform_admin'] }, undefined)).toBe(PLATFORM_SCOPE);
    expect(resolveTenant({ sub: 'ops', tenants: ['demo'], roles: ['platform_admin'] }, undefined)).toBe('demo');
    expect(codeOf(() => resolveTenant({ sub: 'x', tenants: [], roles: ['admin', 'support'] }, undefined))).toBe('TENANT_REQUIRED');
  });
});

describe('isReservedSubject', () => {
  it.each([
    ['system:sms-provider', true],
    ['System:seed', true],
    [' system:x', true],
    ['systems:x', false],
    ['user:system:x', false],
  ])('%s → %s', (sub, reserved) => expect(isReservedSubject(sub)).toBe(reserved));
});
