import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock, DataDirLockedError } from './data-dir-lock';

describe('DATA_DIR lock', () => {
  let dir: string;
  let lockPath: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'caregraph-lockfile-'));
    lockPath = join(dir, 'pglite.lock');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The PID of a process that has exited. */
  const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid;
  const holder = (pid: number, host = hostname()) => JSON.stringify({ pid, hostname: host, startedAt: '2026-01-01T00:00:00.000Z' });

  it('writes the holder, refuses a second holder, and removes the file on release', () => {
    const lock = acquireDataDirLock(lockPath);
    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(() => acquireDataDirLock(lockPath)).toThrow(DataDirLockedError);
    lock.release();
    expect(existsSync(lockPath)).toBe(false);
    acquireDataDirLock(lockPath).release();
  });

  it('refuses while the holder runs, naming the lock file and its PID', () => {
    const parent = process.ppid;
    writeFileSync(lockPath, holder(parent));
    expect(() => acquireDataDirLock(lockPath)).toThrow(new RegExp(`process ${parent} .*lock file ${lockPath.replace(/[.]/g, '\\.')}`));
    expect(readFileSync(lockPath, 'utf8')).toBe(holder(parent));
  });

  it('takes over the lock of a dead process, an unreadable lock, and a previous life of its own PID', () => {
    const dead = deadPid();
    for (const [stale, expected] of [
      [holder(dead), `process ${dead} (since 2026-01-01T00:00:00.000Z)`],
      ['', 'an unreadable lock file'],
      [holder(process.pid), `process ${process.pid} (since 2026-01-01T00:00:00.000Z)`],
    ] as const) {
      writeFileSync(lockPath, stale);
      const lock = acquireDataDirLock(lockPath);
      expect(lock.takenOver).toBe(expected);
      expect(JSON.parse(readFileSync(lockPath, 'utf8')).pid).toBe(process.pid);
      lock.release();
    }
  });

  it('never judges a lock of another host stale', () => {
    writeFileSync(lockPath, holder(deadPid(), 'another-host'));
    expect(() => acquireDataDirLock(lockPath)).toThrow(/on host 'another-host'/);
  });

  it('does not remove a lock it no longer holds', () => {
    const lock = acquireDataDirLock(lockPath);
    writeFileSync(lockPath, holder(process.ppid));
    lock.release();
    expect(readFileSync(lockPath, 'utf8')).toBe(holder(process.ppid));
  });
});
