/**
 * The deepest nesting of objects and arrays CareGraph accepts in JSON it is
 * given (request bodies, GraphQL variables and literals, JSON in query
 * parameters). Far above anything the APIs need (a template definition is at
 * most 12 constraint levels, about 25 JSON levels), far below what a
 * recursive walk (validation, serialisation, hashing) can survive.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether a parsed JSON value nests objects/arrays more than `max` levels deep
 * (`{}` is one level, a scalar none). Iterative, so the depth it measures
 * cannot overflow the stack; it stops at the first branch that is too deep.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}
