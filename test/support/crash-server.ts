import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killIfRunning, signalAndWait, startServer, type ServerProcess } from '../../scripts/support/server-process';
import { processDatabase, serverApi, type ProcessDatabase } from './process-database';

/**
 * A compiled server a crash test kills with SIGKILL and starts again on the same
 * data directory and database. Registers its own beforeAll/afterAll: call
 * it inside the describe. It starts on a copy of the run's snapshot database;
 * without TEST_DATABASE_URL the server keeps its PGlite files in the data
 * directory, so a restart finds them.
 */
export function crashTestServer(extraEnv: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-crash-'));
  let database: ProcessDatabase | undefined;
  let env: Record<string, string> = {};
  let server: ServerProcess | undefined;
  let token = '';

  beforeAll(async () => {
    database = await processDatabase(dataDir);
    env = {
      ...database.env,
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
      ...extraEnv,
    };
    token = await database.token();
  }, 300_000);

  afterAll(async () => {
    killIfRunning(server);
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  return {
    dataDir,
    /** The server's own database URL; undefined when it runs on PGlite files in `dataDir`. */
    databaseUrl: () => env.DATABASE_URL || undefined,
    encryptionKey: () => Buffer.from(env.ENCRYPTION_KEY, 'base64'),
    /** Calls to the server started last. */
    api: (...args: Parameters<ReturnType<typeof serverApi>>) => serverApi(server!.base, token)(...args),
    start: async () => void (server = await startServer(env)),
    kill: async () => void (await signalAndWait(server!, 'SIGKILL')),
  };
}
