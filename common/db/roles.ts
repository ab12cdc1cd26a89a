/**
 * Database roles (docs/security.md "Database roles"): the service's queries
 * run under a least-privilege runtime role; migrations, the job queue's
 * installation and the grants below run under the owner of the tables.
 *
 * The rules, applied by the owner after every migration run, so a table added
 * by a later migration is covered without anyone remembering to:
 * - every table of the `ehr` and `messaging` schemas with a "tenantId" column
 *   has ROW LEVEL SECURITY enabled and FORCEd, the policy `tenant_isolation`
 *   (rows of the tenant in `app.tenant_id`, none when it is unset) and the
 *   policy `owner_maintenance` for the owner (its SECURITY DEFINER functions
 *   and maintenance commands work across tenants);
 * - the runtime role may SELECT, INSERT, UPDATE and DELETE in those schemas,
 *   except what an append-only trigger refuses (those privileges are revoked,
 *   so the audit trail is INSERT + SELECT only, whatever a session sets) and
 *   what an owner-only trigger (`refuse_write_but_by_owner`, on rows that only
 *   the owner's functions write, such as the chains' heads) refuses; it may not
 *   touch `_prisma_migrations`, and it owns nothing;
 * - the runtime role may use pg-boss's schema (rows only; creating a queue's
 *   partition goes through pg-boss's `create_queue`, made SECURITY DEFINER).
 */

/** The runtime role created when only the owner's connection is configured (development), and on PGlite. */
export const DEFAULT_RUNTIME_ROLE = 'caregraph_runtime';

/** The schemas whose tables hold tenant data. */
export const TENANT_SCHEMAS = ['ehr', 'messaging'] as const;

export const JOB_QUEUE_SCHEMA = 'pgboss';

export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

export interface SqlRunner {
  query<T = any>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
}

/**
 * Creates the runtime role when it does not exist: no superuser, no
 * BYPASSRLS, no CREATEDB/CREATEROLE, no password (development servers with
 * trust authentication; a production operator creates the role with a
 * password and configures both connections). Roles are cluster-wide, so
 * several processes or test databases may race here: a lost race is fine.
 */
export async function ensureRuntimeRole(db: SqlRunner, role: string, login: boolean): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const { rows } = await db.query(`SELECT 1 FROM pg_roles WHERE rolname = $1`, [role]);
    if (rows.length > 0) return;
    try {
      await db.query(`CREATE ROLE ${ident(role)} ${login ? 'LOGIN' : 'NOLOGIN'} NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION`);
      return;
    } catch (err) {
      // duplicate_object, unique_violation, or "tuple concurrently updated" when another session created it first.
      if (attempt >= 3) throw err;
    }
  }
}

/** The rule above, for every tenant table of `schema` (idempotent; run by the owner). */
function tenantIsolationSql(schema: string): string {
  return `
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT c.oid::regclass AS tbl, c.relrowsecurity AS enabled, c.relforcerowsecurity AS forced
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${literal(schema)} AND c.relkind IN ('r', 'p')
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenantId' AND NOT a.attisdropped)
  LOOP
    IF NOT t.enabled OR NOT t.forced THEN
      EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY', t.tbl);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = t.tbl AND polname = 'tenant_isolation') THEN
      EXECUTE format('CREATE POLICY tenant_isolation ON %s USING ("tenantId" = current_setting(''app.tenant_id'', true)) WITH CHECK ("tenantId" = current_setting(''app.tenant_id'', true))', t.tbl);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = t.tbl AND polname = 'owner_maintenance') THEN
      EXECUTE format('CREATE POLICY owner_maintenance ON %s TO %I USING (true) WITH CHECK (true)', t.tbl, current_user);
    END IF;
  END LOOP;
END $$`;
}

/** The runtime role's privileges on one tenant schema (idempotent; run by the owner). */
function tenantGrantsSql(schema: string, role: string): string[] {
  const s = ident(schema);
  const r = ident(role);
  return [
    `REVOKE ALL ON ALL TABLES IN SCHEMA ${s} FROM ${r}`,
    `GRANT USAGE ON SCHEMA ${s} TO ${r}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${r}`,
    `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${s} TO ${r}`,
    `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${s} TO ${r}`,
    `DO $$
DECLARE
  t record;
BEGIN
  IF to_regclass(${literal(`${schema}._prisma_migrations`)}) IS NOT NULL THEN
    EXECUTE format('REVOKE ALL ON %s FROM %I', ${literal(`${s}._prisma_migrations`)}, ${literal(role)});
  END IF;
  -- What an append-only or owner-only trigger refuses, the role may not even try:
  -- tgtype bits 4 = INSERT, 8 = DELETE, 16 = UPDATE, 32 = TRUNCATE.
  FOR t IN
    SELECT tg.tgrelid::regclass AS tbl, bit_or(tg.tgtype::int) AS events
    FROM pg_trigger tg
    JOIN pg_proc p ON p.oid = tg.tgfoid
    JOIN pg_class c ON c.oid = tg.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${literal(schema)} AND p.proname IN ('refuse_change_of_append_only', 'refuse_write_but_by_owner') AND NOT tg.tgisinternal
    GROUP BY tg.tgrelid
  LOOP
    IF t.events & 4 <> 0 THEN EXECUTE format('REVOKE INSERT ON %s FROM %I', t.tbl, ${literal(role)}); END IF;
    IF t.events & 8 <> 0 THEN EXECUTE format('REVOKE DELETE ON %s FROM %I', t.tbl, ${literal(role)}); END IF;
    IF t.events & 16 <> 0 THEN EXECUTE format('REVOKE UPDATE ON %s FROM %I', t.tbl, ${literal(role)}); END IF;
  END LOOP;
END $$`,
  ];
}

export type GrantedSchema = (typeof TENANT_SCHEMAS)[number] | typeof JOB_QUEUE_SCHEMA;

/**
 * Applies the rules above for the runtime role on those of `schemas` that
 * exist. Runs in the owner's session after a migration run, on the schema it
 * migrated: no object of one schema refers to another's, and each run of the
 * script costs about 0.1 s of database time on embedded PGlite.
 */
export async function applyRuntimePrivileges(db: SqlRunner, role: string, schemas: readonly GrantedSchema[]): Promise<void> {
  const me = (await db.query<{ me: string; sup: boolean }>(`SELECT current_user AS me, rolsuper AS sup FROM pg_roles WHERE rolname = current_user`)).rows[0];
  if (me?.me === role)
    throw new Error(`the runtime role '${role}' is the owner connection's role: configure a separate runtime role (docs/security.md, Database roles)`);
  const existing = new Set(
    (await db.query<{ name: string }>(`SELECT nspname AS name FROM pg_namespace WHERE nspname = ANY($1::text[])`, [schemas])).rows.map((r) => r.name),
  );
  const parts: string[] = ['BEGIN'];
  for (const schema of TENANT_SCHEMAS) {
    if (!existing.has(schema)) continue;
    parts.push(tenantIsolationSql(schema), ...tenantGrantsSql(schema, role));
  }
  if (existing.has(JOB_QUEUE_SCHEMA)) {
    const s = ident(JOB_QUEUE_SCHEMA);
    const r = ident(role);
    parts.push(
      `GRANT USAGE ON SCHEMA ${s} TO ${r}`,
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${r}`,
      `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${s} TO ${r}`,
      `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${s} TO ${r}`,
      // Partitions that create_queue adds later.
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${s} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${r}`,
    );
  }
  parts.push('COMMIT');
  // A GRANT on every table of a schema can meet another process's pg-boss adding a queue partition
  // (create_queue runs outside the migration lock): PostgreSQL then fails the GRANT with "tuple
  // concurrently updated". The script is one idempotent transaction, so it is simply run again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await runScript(db, parts);
    } catch (err) {
      if (attempt >= 5 || !isCatalogRace(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/**
 * PostgreSQL's answer when two sessions change the same catalog rows at once (queue partitions,
 * grants): one is rolled back whole as a deadlock victim or with "tuple concurrently updated", and
 * running its idempotent work again succeeds.
 */
export const isCatalogRace = (err: unknown): boolean =>
  (err as { code?: string })?.code === '40P01' || /tuple concurrently updated/.test(String((err as Error)?.message));

/** Runs statements one by one (PGlite's query takes one statement); rolls back on failure. */
async function runScript(db: SqlRunner, statements: string[]): Promise<void> {
  try {
    for (const sql of statements) await db.query(sql);
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/**
 * What the runtime role may do, checked from its own session at start: a
 * superuser or BYPASSRLS role would make row-level security moot.
 */
export async function assertLeastPrivilege(db: SqlRunner): Promise<void> {
  const { rows } = await db.query<{ name: string; sup: boolean; bypass: boolean }>(
    `SELECT rolname AS name, rolsuper AS sup, rolbypassrls AS bypass FROM pg_roles WHERE rolname = current_user`,
  );
  const me = rows[0];
  if (!me) throw new Error('could not read the runtime role');
  if (me.sup || me.bypass) {
    throw new Error(
      `the runtime database role '${me.name}' is ${me.sup ? 'a superuser' : 'BYPASSRLS'}: the service refuses to run with row-level security bypassed. ` +
        'Set DATABASE_URL to a least-privilege role and DATABASE_OWNER_URL to the owner (docs/security.md, Database roles)',
    );
  }
}
