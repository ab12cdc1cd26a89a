// @ts-check
'use strict';

/**
 * The embedded PostgreSQL (PGlite, WebAssembly) on a thread of its own, so SQL
 * runs beside the event loop instead of blocking it. The main thread's side is
 * `pglite-thread.ts`; this file is plain CommonJS because a worker thread
 * loads JavaScript, from sources (ts-jest) and from dist/ alike.
 *
 * Protocol: every request is `{ id, op, ... }` and gets exactly one reply
 * `{ id, result }` or `{ id, error }`. Concurrency is PGlite's own: a query
 * waits while a transaction holds the connection, as it would in-thread.
 */
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require('@electric-sql/pglite');

if (!parentPort) throw new Error('pglite-worker.cjs runs as a worker thread');
const port = parentPort;

/** Hands a column's text to the main thread unparsed (its parser is a function, which cannot cross threads). */
const keepText = (/** @type {string} */ text) => text;

/**
 * A tarball as PGlite's `loadDataDir` reads it: its `arrayBuffer()` and its
 * `type` (an uncompressed tar). Not a `Blob` over the bytes: Node 20's
 * `Blob.arrayBuffer()` copies through a stream in 64 KiB chunks, which took
 * about a second for the 44 MB test snapshot, opened by every test platform.
 * @param {Uint8Array} bytes
 * @returns {Blob}
 */
function tarball(bytes) {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const buffer = whole ? bytes.buffer : bytes.slice().buffer;
  return /** @type {Blob} */ (/** @type {unknown} */ ({ type: 'application/x-tar', size: bytes.byteLength, arrayBuffer: async () => buffer }));
}

const inMemory = workerData.dataDir === 'memory://';

/** @type {Promise<PGlite>} */
const opened = PGlite.create({
  dataDir: inMemory ? undefined : workerData.dataDir,
  // A dump of another instance's files (dumpDataDir) to start from instead of an empty cluster.
  loadDataDir: workerData.loadDataDir ? tarball(workerData.loadDataDir) : undefined,
  // Compiled once by the opening process (pglite-thread.ts).
  wasmModule: workerData.wasmModule,
  // In memory, the database's files are already RAM: PostgreSQL's default 128 MB buffer pool would hold a second
  // copy, and zeroing it at start-up was half the CPU time of opening an instance (measured). 16 MB holds every
  // table and index the demo data and the test suites use.
  startParams: inMemory ? [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] : undefined,
});

/**
 * Open interactive transactions: PGlite's transaction callback stays pending
 * (on `finish`) while the main thread sends the transaction's statements.
 * @type {Map<number, { tx: any, finish: () => void, settled: Promise<unknown> }>}
 */
const transactions = new Map();
let nextTransactionId = 1;

/** @param {number | undefined} txId */
async function target(txId) {
  if (txId === undefined) return opened;
  const entry = transactions.get(txId);
  if (!entry) throw new Error(`transaction ${txId} is not open`);
  return entry.tx;
}

/**
 * Names the transaction's tenant, as `inTenant` does (tenant-session.ts): row-level security compares it.
 * @param {any} tx
 * @param {string} tenant
 */
function setTenant(tx, tenant) {
  return tx.query("SELECT set_config('app.tenant_id', $1, true)", [tenant]);
}

/** @param {any} msg */
async function handle(msg) {
  switch (msg.op) {
    case 'ready':
      await opened;
      return null;
    case 'query': {
      const options = {
        rowMode: msg.rowMode,
        paramTypes: msg.paramTypes,
        parsers: Object.fromEntries((msg.textTypes ?? []).map((/** @type {number} */ t) => [t, keepText])),
      };
      /** @param {any} db */
      const run = async (db) => {
        const { rows, fields, affectedRows } = await db.query(msg.sql, msg.params, options);
        return { rows, fields, affectedRows };
      };
      if (msg.tenant === undefined) return run(await target(msg.txId));
      // A statement bound to a tenant: its own transaction with the tenant set first, all on this thread.
      return (await opened).transaction(async (/** @type {any} */ tx) => (await setTenant(tx, msg.tenant), run(tx)));
    }
    case 'exec': {
      const db = await target(msg.txId);
      const results = await db.exec(msg.sql);
      return results.map((/** @type {any} */ r) => ({ rows: r.rows, fields: r.fields, affectedRows: r.affectedRows }));
    }
    case 'begin': {
      const db = await opened;
      const id = nextTransactionId++;
      return new Promise((began, failed) => {
        const settled = db.transaction(
          (/** @type {any} */ tx) =>
            new Promise((finish, failedToSetTenant) => {
              const ready = msg.tenant === undefined ? Promise.resolve() : setTenant(tx, msg.tenant);
              ready.then(() => {
                transactions.set(id, { tx, finish: () => finish(undefined), settled });
                began(id);
              }, failedToSetTenant);
            }),
        );
        // Failing before the callback ran (BEGIN itself failed) fails `begin`; later failures reach `finish`.
        settled.catch(failed);
      });
    }
    case 'rollback': {
      const entry = transactions.get(msg.txId);
      if (!entry) throw new Error(`transaction ${msg.txId} is not open`);
      await entry.tx.rollback();
      return null;
    }
    case 'finish': {
      // Commits unless rolled back already (PGlite skips COMMIT once the transaction is closed).
      const entry = transactions.get(msg.txId);
      if (!entry) throw new Error(`transaction ${msg.txId} is not open`);
      transactions.delete(msg.txId);
      if (!msg.commit && !entry.tx.closed) await entry.tx.rollback();
      entry.finish();
      await entry.settled;
      return null;
    }
    case 'dump': {
      const db = await opened;
      const file = await db.dumpDataDir('none');
      return new Uint8Array(await file.arrayBuffer());
    }
    case 'close': {
      const db = await opened;
      await db.close();
      return null;
    }
    default:
      throw new Error(`unknown operation '${msg.op}'`);
  }
}

/** Errors cross as plain fields; the main thread rebuilds PGlite's DatabaseError from them. */
function serializeError(/** @type {any} */ e) {
  if (!(e instanceof Error)) return { message: String(e) };
  const fields = {};
  for (const key of Object.keys(e)) {
    const value = /** @type {any} */ (e)[key];
    if (key !== 'params' && key !== 'queryOptions' && (value === undefined || ['string', 'number', 'boolean'].includes(typeof value))) {
      /** @type {any} */ (fields)[key] = value;
    }
  }
  return {
    ...fields,
    message: e.message,
    name: e.name,
    databaseError: e.constructor?.name !== 'Error' && typeof (/** @type {any} */ (e).severity) === 'string',
  };
}

port.on('message', (/** @type {any} */ msg) => {
  handle(msg).then(
    (result) => port.postMessage({ id: msg.id, result }),
    (error) => port.postMessage({ id: msg.id, error: serializeError(error) }),
  );
});
