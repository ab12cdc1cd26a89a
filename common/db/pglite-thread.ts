import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { types } from 'node:util';
import { Worker } from 'node:worker_threads';

import { messages } from '@electric-sql/pglite';

import { projectRoot } from '../paths';
import { statementTenant } from './tenant-session';

/** The part of PGlite's API the platform uses (Prisma's PGlite adapter, pg-boss, migrations, tests). */
export interface PGliteQueryOptions {
  rowMode?: 'array' | 'object';
  /** Column parsers by type OID; they run on the calling thread. */
  parsers?: Partial<Record<number, (text: string, typeId: number) => unknown>>;
  paramTypes?: number[];
}

export interface PGliteResults<T = any> {
  rows: T[];
  fields: Array<{ name: string; dataTypeID: number }>;
  affectedRows?: number;
}

interface PGliteQueryable {
  query<T = any>(sql: string, params?: unknown[], options?: PGliteQueryOptions): Promise<PGliteResults<T>>;
  exec(sql: string): Promise<PGliteResults[]>;
}

export interface PGliteTransaction extends PGliteQueryable {
  rollback(): Promise<void>;
  readonly closed: boolean;
}

export interface PGliteClient extends PGliteQueryable {
  transaction<T>(fn: (tx: PGliteTransaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

type Request =
  | { op: 'ready' | 'close' | 'dump' }
  | { op: 'begin'; tenant?: string }
  | { op: 'query'; sql: string; params?: unknown[]; rowMode?: string; paramTypes?: number[]; textTypes?: number[]; txId?: number; tenant?: string }
  | { op: 'exec'; sql: string; txId?: number }
  | { op: 'rollback'; txId: number }
  | { op: 'finish'; txId: number; commit: boolean };

interface Pending {
  resolve(value: any): void;
  reject(error: Error): void;
}

/**
 * PGlite on a worker thread (`pglite-worker.cjs`): the embedded database's
 * CPU time (about half of a request's, measured) leaves the event loop, so
 * the all-in-one process uses a second core and a long query no longer stalls
 * HTTP, subscriptions or health checks. Rows cross threads by structured
 * clone; column parsers given per query run here, on the caller's thread.
 */
export class PGliteThread implements PGliteClient {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stopped: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: { id: number; result?: unknown; error?: SerializedError }) => this.settle(reply));
    worker.on('error', (e) => this.stop(new Error(`embedded database thread failed: ${e.message}`)));
    worker.on('exit', (code) => this.stop(new Error(`embedded database thread exited (code ${code})`)));
    // The thread keeps the process alive only while a request is in flight, as an in-thread PGlite would.
    worker.unref();
  }

  /**
   * Starts the thread and opens PGlite in `dataDir` (a folder, or `memory://`),
   * starting from `loadDataDir` (a `dumpDataDir()` of another instance) when given.
   */
  static async open(dataDir: string, loadDataDir?: Uint8Array): Promise<PGliteThread> {
    const workerData = { dataDir, loadDataDir: loadDataDir && shared(loadDataDir), wasmModule: await compiledPGlite() };
    const worker = new Worker(join(projectRoot(), 'common', 'db', 'pglite-worker.cjs'), { workerData });
    const thread = new PGliteThread(worker);
    try {
      await thread.call({ op: 'ready' });
    } catch (e) {
      await worker.terminate();
      throw e;
    }
    return thread;
  }

  query<T = any>(sql: string, params?: unknown[], options?: PGliteQueryOptions, txId?: number): Promise<PGliteResults<T>> {
    const parsers = options?.parsers;
    const request = {
      op: 'query' as const,
      sql,
      params,
      rowMode: options?.rowMode,
      paramTypes: options?.paramTypes,
      textTypes: parsers && Object.keys(parsers).map(Number),
      txId,
      // Outside a transaction, a read bound to a tenant runs in one of its own that sets it (tenant-session.ts).
      tenant: txId === undefined ? statementTenant.getStore() : undefined,
    };
    const sent = this.call<PGliteResults<T>>(request);
    return parsers ? sent.then((result) => applyParsers(result, parsers)) : sent;
  }

  exec(sql: string, txId?: number): Promise<PGliteResults[]> {
    return this.call({ op: 'exec', sql, txId });
  }

  async transaction<T>(fn: (tx: PGliteTransaction) => Promise<T>): Promise<T> {
    const txId = await this.call<number>({ op: 'begin', tenant: statementTenant.getStore() });
    let closed = false;
    const open = () => {
      if (closed) throw new Error('Transaction is closed');
    };
    const tx: PGliteTransaction = {
      query: async (sql, params, options) => (open(), this.query(sql, params, options, txId)),
      exec: async (sql) => (open(), this.exec(sql, txId)),
      rollback: async () => {
        open();
        await this.call({ op: 'rollback', txId });
        closed = true;
      },
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await fn(tx);
    } catch (e) {
      closed = true;
      await this.call({ op: 'finish', txId, commit: false }).catch(() => {});
      throw e;
    }
    closed = true;
    await this.call({ op: 'finish', txId, commit: true });
    return result;
  }

  /** The instance's files as an uncompressed tarball, for `open(…, loadDataDir)`. */
  dumpDataDir(): Promise<Uint8Array> {
    return this.call({ op: 'dump' });
  }

  async close(): Promise<void> {
    if (this.stopped) return;
    await this.call({ op: 'close' });
    this.stop(new Error('embedded database closed'));
    await this.worker.terminate();
  }

  private call<T = unknown>(request: Request): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...request });
    });
  }

  private settle(reply: { id: number; result?: unknown; error?: SerializedError }): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if (reply.error) pending.reject(deserializeError(reply.error));
    else pending.resolve(reply.result);
  }

  private stop(reason: Error): void {
    this.stopped ??= reason;
    for (const pending of this.pending.values()) pending.reject(reason);
    this.pending.clear();
  }
}

/** The one WebAssembly call used here (the project's `lib` has no DOM types, which declare the namespace); a module is opaque. */
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<object> };

let compiled: Promise<object> | undefined;

/**
 * PGlite's WebAssembly (9 MB), compiled once per process and shared with every thread that opens an instance: a
 * process that opens several (a test worker's platforms, a restart) instantiates it instead of compiling it again
 * and tiering its hot functions up again, about 0.4 s of CPU per open (measured).
 */
function compiledPGlite(): Promise<object> {
  return (compiled ??= readFile(join(dirname(require.resolve('@electric-sql/pglite')), 'pglite.wasm')).then((bytes) => WebAssembly.compile(bytes)));
}

interface SerializedError {
  message: string;
  name?: string;
  databaseError?: boolean;
  [field: string]: unknown;
}

/** PostgreSQL errors come back as PGlite's DatabaseError (callers map them by `instanceof` and `code`). */
function deserializeError(e: SerializedError): Error {
  const { message, name, databaseError, ...fields } = e;
  if (databaseError) return Object.assign(new messages.DatabaseError(message, Number(fields.length ?? 0), 'error'), fields);
  const error = Object.assign(new Error(message), fields);
  if (name) error.name = name;
  return error;
}

function applyParsers<T>(result: PGliteResults<T>, parsers: NonNullable<PGliteQueryOptions['parsers']>): PGliteResults<T> {
  const columns = result.fields.flatMap((field, index) => {
    const parse = parsers[field.dataTypeID];
    return parse ? [{ key: Array.isArray(result.rows[0]) ? index : field.name, parse, typeId: field.dataTypeID }] : [];
  });
  if (columns.length === 0) return result;
  for (const row of result.rows as any[]) {
    for (const { key, parse, typeId } of columns) {
      const text = row[key];
      if (text !== null && text !== undefined) row[key] = parse(text, typeId);
    }
  }
  return result;
}

/**
 * The bytes in shared memory, which a worker reads in place: a plain buffer in
 * `workerData` is serialised into the new thread byte by byte, which cost 0.5 to
 * 1.3 s for the 44 MB test snapshot. Callers that open many copies (the
 * tests) pass shared bytes already and nothing is copied.
 */
function shared(bytes: Uint8Array): Uint8Array {
  // By its internal type, not `instanceof`: a test harness may hand over a buffer made in another realm.
  if (types.isSharedArrayBuffer(bytes.buffer)) return bytes;
  const copy = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  copy.set(bytes);
  return copy;
}
