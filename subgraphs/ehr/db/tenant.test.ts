import { scopeArgs } from './tenant';

describe('tenant scope of Prisma operations', () => {
  it('adds the tenant to every where and to created rows', () => {
    expect(scopeArgs('Patient', 'findMany', { where: { id: 'p-1' } }, 'demo')).toEqual({ where: { id: 'p-1', tenantId: 'demo' } });
    expect(scopeArgs('Patient', 'count', undefined, 'demo')).toEqual({ where: { tenantId: 'demo' } });
    expect(scopeArgs('Patient', 'updateMany', { where: { id: 'p-1' }, data: { family: 'X' } }, 'demo')).toEqual({
      where: { id: 'p-1', tenantId: 'demo' },
      data: { family: 'X' },
    });
    expect(scopeArgs('Patient', 'create', { data: { id: 'p-1' } }, 'demo')).toEqual({ data: { id: 'p-1', tenantId: 'demo' } });
    expect(scopeArgs('AccessLog', 'createMany', { data: [{ id: 'a' }, { id: 'b' }] }, 'demo').data).toEqual([
      { id: 'a', tenantId: 'demo' },
      { id: 'b', tenantId: 'demo' },
    ]);
    expect(scopeArgs('Consent', 'upsert', { where: { x: 1 }, create: { id: 'c' }, update: {} }, 'demo')).toEqual({
      where: { x: 1, tenantId: 'demo' },
      create: { id: 'c', tenantId: 'demo' },
      update: {},
    });
  });

  it('refuses to read, write or move rows of another tenant', () => {
    expect(() => scopeArgs('Patient', 'findFirst', { where: { tenantId: 'acme' } }, 'demo')).toThrow(/tenant scope violation/);
    expect(() => scopeArgs('Patient', 'create', { data: { tenantId: 'acme' } }, 'demo')).toThrow(/tenant scope violation/);
    expect(() => scopeArgs('Patient', 'updateMany', { where: {}, data: { tenantId: 'acme' } }, 'demo')).toThrow(/another tenant/);
  });
});
