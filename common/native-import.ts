/**
 * A real `import()` even though tsc compiles to CommonJS (which would turn
 * `import()` into `require()`), for ESM-only packages. Works in plain Node and
 * under jest with --experimental-vm-modules.
 */
// The source differs per module instance: V8 caches compiled `new Function`
// code by source, and a cached copy would carry the dynamic-import callback of
// the jest environment (test file) that compiled it first.
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- the point: an import() tsc leaves alone
export const nativeImport = new Function('specifier', `return import(specifier) /* ${process.hrtime.bigint()} */`) as (s: string) => Promise<any>;
