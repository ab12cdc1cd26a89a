/**
 * Applies the committed migrations of both subgraphs to the configured
 * database (what the services also do at start-up).
 *
 *   npm run db:migrate            (node dist/scripts/db-migrate.js)
 *
 * DATABASE_URL: unset -> embedded PGlite in $DATA_DIR/pglite (DATA_DIR defaults
 * to ./data); memory:// -> in-memory PGlite (useful only as a check);
 * postgres://… -> that PostgreSQL server. DATABASE_OWNER_URL: the tables'
 * owner, which migrates and grants (docs/security.md, Database roles).
 */
import { openDatabase, redactUrl } from '../common/db/database';
import { DataDirLockedError } from '../common/db/data-dir-lock';
import { migrate, MigrationError, SUBGRAPHS } from '../common/db/migrate';

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  const dataDir = env.DATA_DIR?.trim() || './data';
  const started = Date.now();
  const db = await openDatabase({ databaseUrl, ownerUrl: env.DATABASE_OWNER_URL?.trim() || undefined, dataDir });
  const where = db.kind === 'postgres' ? redactUrl(databaseUrl!) : `PGlite in ${db.dataDir}`;
  console.log(`database: ${where} (opened in ${Date.now() - started} ms)`);
  try {
    for (const subgraph of SUBGRAPHS) {
      const { applied } = await migrate(db, subgraph);
      console.log(applied.length ? `${subgraph}: applied ${applied.length} migration(s): ${applied.join(', ')}` : `${subgraph}: already up to date`);
    }
  } finally {
    await db.close();
  }
  console.log(`done in ${Date.now() - started} ms`);
  return 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      // A lock held by a running server or a refused migration is the operator's to act on: its message says how.
      const expected = err instanceof DataDirLockedError || err instanceof MigrationError;
      console.error(expected ? `db:migrate: ${err.message}` : err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}
