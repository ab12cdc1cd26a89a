/**
 * How a query names its tenant to the database: `app.tenant_id`, set with
 * `set_config(..., true)` (transaction-local) at the start of a transaction,
 * is what every tenant table's row-level security policy compares with.
 * Without it the runtime role sees and writes no rows. Both subgraphs use
 * these two helpers (docs/security.md, Database roles).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The tenant of the operation in progress, for the database drivers: a statement
 * run outside a transaction while it is set is run by the driver as one
 * transaction that sets the tenant first (`pglite-thread.ts` on the database
 * thread, `database.ts` on a PostgreSQL connection).
 */
export const statementTenant = new AsyncLocalStorage<string>();

/**
 * Operations whose statements the driver binds to the tenant (see
 * statementTenant): reads of one statement each, or (with `include`) several
 * that need no common transaction, and raw SQL (one statement, a write too).
 * Not findUnique: Prisma batches concurrent findUniques of one shape into one
 * query on the next tick, in the first caller's context, which may be another
 * tenant's. Not the other writes: Prisma may run them as several statements
 * that must commit together.
 */
const DRIVER_BOUND_OPERATIONS = new Set(['findMany', 'findFirst', 'findFirstOrThrow', 'count', 'aggregate', 'groupBy', '$queryRaw', '$executeRaw']);

/** The part of a Prisma client the helpers need (any generated client, extended or not). */
interface TenantCapableClient {
  $executeRaw(query: TemplateStringsArray, ...values: unknown[]): PromiseLike<number>;
  $transaction(...args: any[]): Promise<any>;
  $extends(...args: any[]): any;
}

const TX_OPTIONS = { maxWait: 20_000, timeout: 30_000 };

/**
 * Runs `fn` in one interactive transaction of `client` with the tenant set
 * first: every statement of `fn` on the transaction client is the tenant's.
 */
export function inTenant<C extends TenantCapableClient, T>(
  client: C,
  tenantId: string,
  fn: (tx: any) => Promise<T>,
  options: { maxWait?: number; timeout?: number } = TX_OPTIONS,
): Promise<T> {
  return client.$transaction(async (tx: TenantCapableClient) => {
    await tx.$executeRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
    return fn(tx);
  }, options);
}

/**
 * `client` with every operation (model queries and raw SQL) run with the
 * tenant set. Reads and raw SQL go to the driver with the tenant (statementTenant): on
 * PGlite the thread runs BEGIN, set_config, the statement and COMMIT in one
 * message instead of four, and the single connection is never held while
 * the event loop is busy elsewhere. Other operations run as a Prisma batch
 * transaction of two statements: set the tenant, then the operation. Do not
 * open an interactive transaction on the result: use `inTenant` on the base
 * client.
 */
export function tenantBound<C extends TenantCapableClient>(client: C, tenantId: string): C {
  return client.$extends({
    name: 'tenant-session',
    query: {
      async $allOperations({ operation, args, query }: { operation: string; args: unknown; query: (args: unknown) => PromiseLike<unknown> }) {
        // Awaited inside run(): a Prisma query starts when awaited, and must start in the tenant's context.
        if (DRIVER_BOUND_OPERATIONS.has(operation)) return statementTenant.run(tenantId, async () => await query(args));
        const [, result] = await client.$transaction([client.$executeRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`, query(args)]);
        return result;
      },
    },
  }) as C;
}

/**
 * `client` for one tenant: operations outside a transaction as in
 * `tenantBound`, and `$transaction(fn)` an interactive transaction of the base
 * client with the tenant set first (its transaction client is not extended, so
 * its statements stay inside that transaction).
 */
export function tenantClient<C extends TenantCapableClient>(client: C, tenantId: string): C {
  const bound = tenantBound(client, tenantId);
  const transaction = (arg: unknown, options?: { maxWait?: number; timeout?: number }) => {
    if (typeof arg !== 'function') throw new Error('tenantClient: only interactive transactions are supported');
    return inTenant(client, tenantId, arg as (tx: any) => Promise<unknown>, options ?? TX_OPTIONS);
  };
  return new Proxy(bound, {
    get: (target, prop) => (prop === '$transaction' ? transaction : Reflect.get(target, prop)),
  });
}
