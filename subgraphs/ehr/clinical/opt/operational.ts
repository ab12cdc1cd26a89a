import { createHash } from 'node:crypto';
import { parseOpt, type OperationalTemplate } from './parse';
import { buildWebTemplate, type WebTemplate } from './web-template';

/** A parsed operational template with its web template; both derived from the stored XML alone. */
export interface Operational {
  opt: OperationalTemplate;
  webTemplate: WebTemplate;
}

const MAX_CACHED = 200;
const cache = new Map<string, Operational>();

/**
 * The parsed form of an OPT's XML, memoised by the XML's hash: templates are
 * immutable, and a large OPT takes long enough to parse that every
 * composition read and write should not pay for it.
 */
export function operational(xml: string): Operational {
  const key = createHash('sha256').update(xml).digest('hex');
  let hit = cache.get(key);
  if (!hit) {
    const opt = parseOpt(xml);
    hit = { opt, webTemplate: buildWebTemplate(opt) };
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(key, hit);
  }
  return hit;
}

/**
 * The data area (the access policy's unit) of an OPT: an encounter
 * composition is `encounter`; otherwise instructions make it an `order`,
 * observations an `observation`, and anything else a `document`.
 */
export function areaOf(opt: OperationalTemplate): 'encounter' | 'observation' | 'order' | 'document' {
  if (/\.encounter\.v\d+$/.test(opt.definition.nodeId)) return 'encounter';
  const types = new Set<string>();
  const visit = (o: OperationalTemplate['definition'], depth: number) => {
    if (depth > 64) return;
    types.add(o.rmType);
    for (const a of o.attributes) for (const c of a.children) visit(c, depth + 1);
  };
  visit(opt.definition, 0);
  if (types.has('INSTRUCTION')) return 'order';
  if (types.has('OBSERVATION')) return 'observation';
  return 'document';
}
