/**
 * Writes a new migration for one subgraph: the SQL that takes a database from
 * the state of the committed migration history to the current schema.prisma.
 *
 *   npm run db:diff -- <messaging|ehr> <name>      (node dist/scripts/db-diff.js <subgraph> <name>)
 *
 * Writes prisma/<subgraph>/migrations/<YYYYMMDDHHMMSS>_<name>/migration.sql
 * (and migration_lock.toml), or says "no changes" and writes nothing.
 *
 * How: Prisma's WebAssembly schema engine diffs `{ tag: 'migrations' }` (the
 * history, replayed into a throwaway in-memory PGlite "shadow database") against
 * the schema file. No server, no native engine, no network.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { PGlite } from '@electric-sql/pglite';

import { migrationsDir, SUBGRAPHS, type Subgraph } from '../common/db/migrate';
import { LOCKFILE_CONTENT, migrationList, NO_FILTER, pgliteAdapterFactory, schemaFile, withSchemaEngine } from '../common/db/schema-engine';

const USAGE = `usage: npm run db:diff -- <subgraph> <migration_name>
  subgraph:        ${SUBGRAPHS.join(' | ')}
  migration_name:  lower-case words joined by underscores, e.g. add_webhooks
example: npm run db:diff -- messaging add_webhooks
(writes prisma/<subgraph>/migrations/<YYYYMMDDHHMMSS>_<migration_name>/migration.sql)`;

export function timestamp(date = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    p(date.getUTCFullYear(), 4) + p(date.getUTCMonth() + 1) + p(date.getUTCDate()) + p(date.getUTCHours()) + p(date.getUTCMinutes()) + p(date.getUTCSeconds())
  );
}

/** The SQL from the committed history to the current schema file ('' when nothing changed). */
export async function diffSubgraph(subgraph: Subgraph): Promise<string> {
  const migrations = await migrationList(subgraph);
  // The main connection is never queried for this diff, only the shadow one
  // (a fresh in-memory PGlite per call, closed by the engine). It reports no
  // schema, so the engine's default is `public` and the generated SQL names
  // the subgraph's schema on every table ("messaging"."Message").
  const pglite = await PGlite.create();
  try {
    const out = await withSchemaEngine(subgraph, pgliteAdapterFactory(pglite, undefined), (engine) =>
      engine.diff({
        from: migrations.migrationDirectories.length === 0 ? { tag: 'empty' } : { tag: 'migrations', ...migrations },
        to: { tag: 'schemaDatamodel', files: [schemaFile(subgraph)] },
        script: true,
        exitCode: null,
        filters: NO_FILTER,
      }),
    );
    const sql = out.stdout ?? '';
    return /^\s*(--[^\n]*\n?\s*)*$/.test(sql) ? '' : sql;
  } finally {
    await pglite.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const [subgraph, name, ...rest] = argv;
  if (!subgraph || subgraph === '-h' || subgraph === '--help') {
    console.log(USAGE);
    return subgraph ? 0 : 1;
  }
  if (!SUBGRAPHS.includes(subgraph as Subgraph)) {
    console.error(`unknown subgraph '${subgraph}'\n\n${USAGE}`);
    return 1;
  }
  if (!name) {
    console.error(`missing the migration name for ${subgraph}\n\n${USAGE}`);
    return 1;
  }
  if (rest.length || !/^[a-z0-9][a-z0-9_]*$/.test(name)) {
    console.error(`'${[name, ...rest].join(' ')}' is not a migration name (lower-case letters, digits, underscores)\n\n${USAGE}`);
    return 1;
  }

  const sql = await diffSubgraph(subgraph as Subgraph);
  if (!sql) {
    console.log(`${subgraph}: no changes (prisma/${subgraph}/schema.prisma matches its migrations); nothing written`);
    return 0;
  }
  const dir = path.join(migrationsDir(subgraph as Subgraph), `${timestamp()}_${name}`);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'migration.sql');
  writeFileSync(file, sql.endsWith('\n') ? sql : `${sql}\n`);
  writeFileSync(path.join(migrationsDir(subgraph as Subgraph), 'migration_lock.toml'), LOCKFILE_CONTENT);
  const rel = (p: string) => path.relative(process.cwd(), p) || p;
  console.log(`${subgraph}: wrote ${rel(file)}`);
  console.log(`${subgraph}: wrote ${rel(path.join(migrationsDir(subgraph as Subgraph), 'migration_lock.toml'))}`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}
