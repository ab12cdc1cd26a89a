/**
 * How a query names its tenant to the database: `app.tenant_id`, set with
 * `set_config(..., true)` (transaction-local) at the start of a transaction,
 * is what every tenant table's row-level security policy compares with.
 * Without it the runtime role sees and writes no rows. Both subgraphs use
 * these two helpers (docs/security.md, Database roles).
 */

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
 * `client` with every operation (model queries and raw SQL) run as a batch
 * transaction of two statements: set the tenant, then the operation. A batch
 * runs without application code between its statements, so on PGlite's single
 * connection it holds the connection only for those statements. Do not open
 * an interactive transaction on the result: use `inTenant` on the base client.
 */
export function tenantBound<C extends TenantCapableClient>(client: C, tenantId: string): C {
  return client.$extends({
    name: 'tenant-session',
    query: {
      async $allOperations({ args, query }: { args: unknown; query: (args: unknown) => PromiseLike<unknown> }) {
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
