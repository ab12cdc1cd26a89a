import { inTenant } from '../../../common/db/tenant-session';
import type { EhrPrisma } from './client';
import type { Prisma } from './generated/client';

/**
 * Tenant scoping in the data layer: a Prisma client extension, made per
 * request, that puts the caller's tenant into the `where` of every read and
 * write and into the `data` of every create, whatever the service code asked
 * for. A service cannot forget the tenant, and a row of another tenant is
 * simply not there (404, never 403).
 */

const WHERE_OPERATIONS = new Set([
  'findFirst',
  'findFirstOrThrow',
  'findMany',
  'findUnique',
  'findUniqueOrThrow',
  'count',
  'aggregate',
  'groupBy',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'delete',
  'deleteMany',
  'upsert',
]);

type Args = Record<string, any>;

function scopeData(data: unknown, tenantId: string, model: string): unknown {
  if (Array.isArray(data)) return data.map((row) => scopeData(row, tenantId, model));
  if (!data || typeof data !== 'object') return data;
  const row = data as Record<string, unknown>;
  if (row.tenantId !== undefined && row.tenantId !== tenantId) {
    throw new Error(`tenant scope violation: ${model} row for tenant '${String(row.tenantId)}' written in tenant '${tenantId}'`);
  }
  return { ...row, tenantId };
}

/** The arguments of one Prisma operation, confined to one tenant. Exported for unit tests. */
export function scopeArgs(model: string, operation: string, args: Args | undefined, tenantId: string): Args {
  const scoped: Args = { ...(args ?? {}) };
  if (WHERE_OPERATIONS.has(operation)) {
    const where = scoped.where as Args | undefined;
    if (where?.tenantId !== undefined && where.tenantId !== tenantId) {
      throw new Error(`tenant scope violation: ${model}.${operation} asked for tenant '${String(where.tenantId)}' in tenant '${tenantId}'`);
    }
    scoped.where = { ...(where ?? {}), tenantId };
  }
  if (operation === 'create' || operation === 'createMany' || operation === 'createManyAndReturn') {
    scoped.data = scopeData(scoped.data, tenantId, model);
  }
  if (operation === 'upsert') {
    scoped.create = scopeData(scoped.create, tenantId, model);
  }
  if ((operation === 'update' || operation === 'updateMany' || operation === 'upsert') && scoped.data?.tenantId !== undefined) {
    throw new Error(`tenant scope violation: ${model}.${operation} may not move a row to another tenant`);
  }
  return scoped;
}

export function tenantScopedClient(prisma: EhrPrisma, tenantId: string): EhrPrisma {
  // A query extension leaves the client's API as it is; only the arguments change.
  return prisma.$extends({
    name: 'tenant-scope',
    query: {
      $allModels: {
        $allOperations({ model, operation, args, query }) {
          return query(scopeArgs(model, operation, args, tenantId));
        },
      },
    },
  }) as unknown as EhrPrisma;
}

export type TenantClient = EhrPrisma;
/**
 * The client inside one tenant transaction (what services receive). A query
 * extension does not change model types, so this is Prisma's transaction
 * client type; at run time it carries the tenant scope.
 */
export type TenantTx = Prisma.TransactionClient;

const TX_OPTIONS = { maxWait: 20_000, timeout: 30_000 };

/**
 * Runs `fn` in one transaction of the tenant: every query is tenant-scoped by
 * the extension, and `app.tenant_id` is set for PostgreSQL row-level security
 * (the second wall: the runtime role sees no other rows).
 */
export async function inTenantTransaction<T>(client: TenantClient, tenantId: string, fn: (tx: TenantTx) => Promise<T>): Promise<T> {
  return inTenant(client, tenantId, (tx) => fn(tx as TenantTx), TX_OPTIONS);
}
