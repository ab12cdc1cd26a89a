/**
 * Summarises a V8 `.cpuprofile` (as written by `node --cpu-prof`) into "where the time goes": self time of the
 * samples inside a time window, grouped by package or area. `npm run bench -- --profile` uses it; the window is
 * given in the monotonic clock's microseconds (`process.hrtime`), which is the clock V8 stamps samples with on
 * Linux, so a window taken in the bench process selects the samples of a measurement in the profiled process.
 */

export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Inclusive bounds, monotonic microseconds. */
export interface Window {
  startUs: number;
  endUs: number;
}

interface Share {
  name: string;
  ms: number;
  /** Fraction of the thread's busy time (everything but idle). */
  share: number;
}

export interface ProfileSummary {
  /** Sampled time inside the window, idle included. */
  windowMs: number;
  busyMs: number;
  idleMs: number;
  categories: Share[];
  /** The functions with the most self time, as `name (file:line)`. */
  functions: Share[];
}

const IDLE = '(idle)';
const PROGRAM = 'V8 and native code outside JavaScript (program)';
const GC = 'garbage collection (pauses on this thread)';
const OTHER_PACKAGES = 'other packages';
/** Messages between the event loop and PGlite's thread: structured clone, and waking the other thread. */
const THREAD_BRIDGE = 'thread messages (postMessage: structured clone, wake-ups)';

/** Packages by area; a package not listed counts as "other packages" (its name is in `functions`). */
const PACKAGE_AREAS: Array<[RegExp, string]> = [
  [/^(dataloader|pg-boss|ioredis|graphql-ws|zod|@opentelemetry\/.*)$/, OTHER_PACKAGES],
  [/^(graphql|type-graphql)$/, 'graphql-js (parse, validate, execute; type-graphql)'],
  [/^@apollo\/(gateway|query-planner|query-graphs|federation-internals)$/, '@apollo/gateway (query planning, result shaping)'],
  [/^@apollo\/(server|subgraph|utils\..*)$|^@as-integrations\//, '@apollo/server and @apollo/subgraph'],
  [
    /^@prisma\/(adapter-pg|driver-adapter-utils)$|^pg(-.*)?$|^postgres-|^@electric-sql\/pglite$|^pglite-prisma-adapter$/,
    'database driver (pg, PGlite, Prisma adapter)',
  ],
  [/^@prisma\//, 'Prisma client runtime (query compiler, result mapping)'],
  [/^jose$/, 'crypto and auth (jose, node:crypto)'],
  [/^(pino(-.*)?|@pinojs\/.*|sonic-boom|thread-stream|fast-redact|on-exit-leak-free)$/, 'logging (pino)'],
  [
    /^(express|router|body-parser|raw-body|finalhandler|send|serve-static|undici|cors|content-type|type-is|accepts|negotiator|mime-types|qs|iconv-lite|on-finished|ws)$/,
    'HTTP (express, undici, ws)',
  ],
];

/**
 * The area a frame belongs to. `root` is the project folder: code under it outside node_modules is ours and
 * grouped by folder (`dist/` stripped), the Prisma clients generated into `subgraphs/<name>/db/generated`
 * excepted. WebAssembly is named by `wasm`: the thread tells whose it is (Prisma's query compiler on the event loop,
 * PostgreSQL on PGlite's thread).
 */
export function categorise(frame: { functionName: string; url: string }, root: string, wasm = 'WebAssembly'): string {
  const { functionName, url } = frame;
  if (functionName === '(idle)') return IDLE;
  if (functionName === '(garbage collector)') return GC;
  if (functionName === '(program)' || functionName === '(root)') return PROGRAM;
  if (url.startsWith('wasm://')) return wasm;
  if (functionName === 'postMessage' || /^node:internal\/(worker|per_context\/messageport)/.test(url)) return THREAD_BRIDGE;
  if (url.startsWith('node:')) {
    if (/crypto/.test(url)) return 'crypto and auth (jose, node:crypto)';
    if (/(_http_|node:http|node:net|node:stream|internal\/(streams|http|net|stream_base|dns)|node:events|internal\/url)/.test(url))
      return 'HTTP (node http, net, streams)';
    return 'node core (timers, promises, modules, other)';
  }
  if (url === '') return 'V8 builtins and native functions';
  const path = url.replace(/^file:\/\//, '');
  const inModules = path.lastIndexOf('/node_modules/');
  if (inModules >= 0) {
    const rest = path.slice(inModules + '/node_modules/'.length).split('/');
    const pkg = rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    return PACKAGE_AREAS.find(([pattern]) => pattern.test(pkg))?.[1] ?? OTHER_PACKAGES;
  }
  const base = root.endsWith('/') ? root : `${root}/`;
  if (!path.startsWith(base)) return OTHER_PACKAGES;
  if (/\/db\/generated\//.test(path)) return 'Prisma client runtime (query compiler, result mapping)';
  const parts = path
    .slice(base.length)
    .replace(/^dist\//, '')
    .split('/');
  // subgraphs/<name>/<feature>, gateway/<area>, common/<area>: one level below the layer, two for subgraphs.
  const depth = parts[0] === 'subgraphs' ? 3 : 2;
  return `ours: ${parts.slice(0, Math.min(depth, parts.length - 1)).join('/')}/`;
}

/**
 * Self time per category of the samples whose timestamp is inside `window` (all samples when omitted). A sample
 * stands for the time until the next one, as in the browser's profiler.
 */
export function summarise(profile: CpuProfile, root: string, options: { window?: Window; wasm?: string; topFunctions?: number } = {}): ProfileSummary {
  const { window, wasm, topFunctions = 15 } = options;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const categories = new Map<string, number>();
  const functions = new Map<string, number>();
  let t = profile.startTime;
  let windowUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    const next = i + 1 < profile.samples.length ? t + profile.timeDeltas[i + 1] : profile.endTime;
    if (window && (t < window.startUs || t > window.endUs)) continue;
    const node = byId.get(profile.samples[i]);
    if (!node) continue;
    const us = Math.max(0, next - t);
    windowUs += us;
    const category = categorise(node.callFrame, root, wasm);
    categories.set(category, (categories.get(category) ?? 0) + us);
    if (category !== IDLE) {
      const { functionName, url, lineNumber } = node.callFrame;
      const file = url
        .replace(/^file:\/\//, '')
        .replace(/^.*\/node_modules\//, '')
        .replace(root.endsWith('/') ? root : `${root}/`, '');
      const key = file ? `${functionName || '(anonymous)'} (${file}:${lineNumber + 1})` : functionName;
      functions.set(key, (functions.get(key) ?? 0) + us);
    }
  }
  const idleUs = categories.get(IDLE) ?? 0;
  categories.delete(IDLE);
  const busyUs = windowUs - idleUs;
  const ranked = (m: Map<string, number>): Share[] =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }));
  return {
    windowMs: windowUs / 1000,
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    categories: ranked(categories),
    functions: ranked(functions).slice(0, topFunctions),
  };
}
