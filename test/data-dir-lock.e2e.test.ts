import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killIfRunning, signalAndWait, startServer, type ServerProcess } from '../scripts/support/server-process';
import { processDatabase } from './support/process-database';
import { projectRoot } from '../common/paths';

/**
 * Two processes on one DATA_DIR used to both open the embedded database and
 * corrupt it (the next start died with `Aborted()`). The second must refuse,
 * naming the lock file and the holder, and the first keep serving its data.
 * Embedded database only (memory:// and PostgreSQL take no lock): it runs in
 * the embedded pass, not again in the PostgreSQL one.
 */
const embedded = process.env.TEST_DATABASE_URL ? describe.skip : describe;

embedded('one process per DATA_DIR (PGlite)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-lock-'));
  const lockFile = join(dataDir, 'pglite.lock');
  const servers: ServerProcess[] = [];
  let env: Record<string, string>;
  let token: string;

  beforeAll(async () => {
    // The run's snapshot in DATA_DIR/pglite: the file-backed PGlite a process with an empty DATABASE_URL opens.
    const database = await processDatabase(dataDir);
    env = { DATA_DIR: dataDir, ...database.env };
    token = await database.token();
  });
  afterAll(() => {
    servers.forEach(killIfRunning);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async (options?: { ready?: boolean }) => {
    const server = await startServer(env, options);
    servers.push(server);
    return server;
  };
  const api = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('refuses a second process while the first serves, and takes over the lock of a process that died, data kept', async () => {
    const first = await start();
    const sent = await api(first, 'POST', '/v1/messages', {
      patientId: 'p-1001',
      templateId: 'appointment-reminder',
      channel: 'sms',
      variables: { date: '2026-12-01', time: '09:30' },
    });
    expect(sent.status).toBe(201);

    // Without the lock the second process starts and serves (and the database is damaged).
    const second = await start({ ready: false });
    const refused = await Promise.race([second.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 60_000).unref())]);
    expect(refused).toMatchObject({ code: 1 });
    expect(second.output()).toContain(lockFile);
    expect(second.output()).toContain(`process ${first.child.pid}`);
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: first.child.pid });

    // A migration run against the served folder says whose lock it is, without a stack trace.
    const migrating = spawnSync(process.execPath, [join(projectRoot(), 'dist', 'scripts', 'db-migrate.js')], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    expect(migrating.status).toBe(1);
    expect(migrating.stderr).toContain(`db:migrate: The embedded database is in use by process ${first.child.pid}`);
    expect(migrating.stderr).not.toMatch(/^\s+at /m);

    // The first still serves, and its data is intact.
    expect((await fetch(`${first.base}/readyz`)).status).toBe(200);
    expect((await api(first, 'GET', `/v1/messages/${sent.body.id}`)).status).toBe(200);

    // It dies without releasing the lock: the next process takes it over, says so, and finds the data.
    first.child.kill('SIGKILL');
    await first.exited;
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: first.child.pid });
    const next = await start();
    expect(next.output()).toMatch(new RegExp(`took over the lock .*pglite\\.lock left by process ${first.child.pid}`));
    const kept = await api(next, 'GET', `/v1/messages/${sent.body.id}`);
    expect(kept.status).toBe(200);
    expect(kept.body.patientId).toBe('p-1001');
    // A clean stop releases the lock.
    expect((await signalAndWait(next, 'SIGTERM')).code).toBe(0);
    expect(existsSync(lockFile)).toBe(false);
  }, 240_000);
});
