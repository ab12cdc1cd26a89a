// node:fs as the conformance CLI imports it. Its bundle names fs.globSync (Node 22) in an import that
// fails to link on Node 20, although only its `tier-check` command calls it; the server scenarios never do.
export * from 'node:fs';
export { default } from 'node:fs';
export function globSync() {
  throw new Error('fs.globSync needs Node 22 (only the conformance tier-check command uses it)');
}
