// Module resolution hook: the conformance CLI's `fs` becomes fs-with-glob.mjs; everything else resolves as usual.
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: new URL('./fs-with-glob.mjs', import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
