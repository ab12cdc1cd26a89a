import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * One process per embedded database. PGlite has no postmaster to notice a
 * second opener: two processes on one data folder both write its WAL and the
 * next start dies with `Aborted()`. So the folder is guarded by a PID file
 * (`<DATA_DIR>/pglite.lock`) created with O_EXCL before PGlite opens, and
 * removed after it closes.
 *
 * Why not proper-lockfile: its lock is a directory whose mtime a timer keeps
 * touching; a lock is stale only once the mtime is older than `stale` (10 s by
 * default), so a restart right after a crash is refused until then, it does
 * not record who holds the lock, and by default it throws from a timer when an
 * update is late (a busy event loop). The holder's PID answers "stale?" at
 * once and without a timer, and names the holder in the refusal. PGlite runs
 * on a worker thread of the same process, so the process's PID is the right
 * holder; the lock is taken on the main thread before the worker starts.
 */
export interface DataDirLock {
  readonly path: string;
  /** Set when a stale lock was taken over: whose it was ("process 123 (since …)" or "an unreadable lock file"). */
  readonly takenOver?: string;
  release(): void;
}

interface Holder {
  pid: number;
  hostname: string;
  startedAt: string;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly lockPath: string,
    readonly holder: Holder,
  ) {
    super(
      holder.hostname === hostname()
        ? `The embedded database is in use by process ${holder.pid} (since ${holder.startedAt}); lock file ${lockPath}. ` +
            `Stop that process first, or set another DATA_DIR. If no CareGraph process ${holder.pid} is running, delete the lock file.`
        : `The embedded database is locked by process ${holder.pid} on host '${holder.hostname}' (since ${holder.startedAt}); lock file ${lockPath}. ` +
            `Only one process may open a DATA_DIR; if that process is gone, delete the lock file.`,
    );
    this.name = 'DataDirLockedError';
  }
}

/** Takes the lock at `lockPath`, taking over a lock whose holder died; throws DataDirLockedError when it is held. */
export function acquireDataDirLock(lockPath: string): DataDirLock {
  const me: Holder = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
  const content = JSON.stringify(me);
  let takenOver: string | undefined;
  for (let attempt = 0; ; attempt++) {
    if (createExclusive(lockPath, content)) break;
    const text = readText(lockPath);
    if (text === undefined) continue; // Released between our create and read: try again.
    const holder = parseHolder(text);
    if (holder && !isStale(holder, lockPath)) throw new DataDirLockedError(lockPath, holder);
    if (attempt >= 3) throw new Error(`Could not take over the stale lock file ${lockPath}; delete it and start again`);
    // Stale. Move it aside atomically: of two processes taking over at once only one can rename
    // it; should the rename catch a fresh lock written meanwhile, it is put back.
    const aside = `${lockPath}.stale-${process.pid}`;
    try {
      renameSync(lockPath, aside);
    } catch {
      continue;
    }
    if (readText(aside) === text) takenOver = holder ? `process ${holder.pid} (since ${holder.startedAt})` : 'an unreadable lock file';
    else restore(aside, lockPath);
    unlinkQuietly(aside);
  }
  held.add(lockPath);

  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    held.delete(lockPath);
    // Only our own lock: never remove one another process holds.
    if (readText(lockPath) === content) unlinkQuietly(lockPath);
  };
  // A process that exits without closing the database (process.exit on a failed shutdown) leaves no lock behind.
  process.on('exit', release);
  return { path: lockPath, takenOver, release };
}

/** Lock files this process holds (a second open in the same process is refused too). */
const held = new Set<string>();

/**
 * The holder is gone when its PID no longer runs here. Our own PID in a lock we do not hold is a
 * previous life of this process (a restarted container often gets the same PID). A lock from
 * another host is never judged stale: its PID means nothing here.
 */
function isStale(holder: Holder, lockPath: string): boolean {
  if (holder.hostname !== hostname()) return false;
  if (holder.pid === process.pid) return !held.has(lockPath);
  return !isAlive(holder.pid);
}

/** Written whole to a temporary file, then linked into place: link fails when the lock exists, and no reader sees it half-written. */
function createExclusive(path: string, content: string): boolean {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, content, { mode: 0o644 });
  try {
    linkSync(temp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkQuietly(temp);
  }
}

function restore(aside: string, lockPath: string): void {
  try {
    linkSync(aside, lockPath);
  } catch {
    // A new lock was created meanwhile; the next round reads it.
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** undefined for a file that is not a lock we wrote (corrupt or empty): treated as stale. */
function parseHolder(text: string): Holder | undefined {
  try {
    const holder = JSON.parse(text) as Holder;
    return Number.isInteger(holder.pid) && holder.pid > 0 && typeof holder.hostname === 'string' ? holder : undefined;
  } catch {
    return undefined;
  }
}

/** Signal 0 checks existence; EPERM means it exists under another user. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
