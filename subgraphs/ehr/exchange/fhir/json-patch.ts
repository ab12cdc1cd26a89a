import { validationError } from '../../../../common/errors';

/**
 * JSON Patch (RFC 6902), as FHIR's `PATCH` with `application/json-patch+json`
 * takes it: the six operations applied in order to a copy of the resource.
 * A malformed document, or an operation that cannot apply (a missing path, a
 * failed `test`), is a validation error and changes nothing.
 */
export type JsonPatchOperation =
  { op: 'add' | 'replace' | 'test'; path: string; value: unknown } | { op: 'remove'; path: string } | { op: 'move' | 'copy'; from: string; path: string };

const OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'];

const invalid = (index: number, message: string) => validationError(`Invalid JSON Patch: operation ${index}: ${message}`, [{ path: `[${index}]`, message }]);

/** The document as operations; anything that is not an array of well-formed RFC 6902 operations is refused. */
export function parseJsonPatch(document: unknown): JsonPatchOperation[] {
  if (!Array.isArray(document)) throw validationError('A JSON Patch document is an array of operations', [{ path: 'body', message: 'not an array' }]);
  return document.map((operation, index): JsonPatchOperation => {
    if (!operation || typeof operation !== 'object' || Array.isArray(operation)) throw invalid(index, 'not an object');
    const { op, path, from } = operation as Record<string, unknown>;
    if (typeof op !== 'string' || !OPS.includes(op)) throw invalid(index, `op must be one of ${OPS.join(', ')}`);
    if (typeof path !== 'string') throw invalid(index, 'path must be a JSON Pointer');
    pointer(path, index);
    if (op === 'move' || op === 'copy') {
      if (typeof from !== 'string') throw invalid(index, `${op} needs from`);
      pointer(from, index);
      return { op, from, path };
    }
    if (op === 'remove') return { op, path };
    if (!('value' in operation)) throw invalid(index, `${op} needs value`);
    return { op: op as 'add' | 'replace' | 'test', path, value: (operation as { value: unknown }).value };
  });
}

/** The reference tokens of a JSON Pointer (RFC 6901). */
function pointer(path: string, index: number): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw invalid(index, `'${path}' is not a JSON Pointer`);
  return path
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~[^01]|~$/.test(token)) throw invalid(index, `'${path}' has an invalid escape`);
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

/** The container a pointer's last token is in, and that token; the document itself has no parent. */
function parentOf(document: unknown, tokens: string[], index: number): { parent: Container; key: string } {
  let node = document;
  for (const token of tokens.slice(0, -1)) {
    const next = childOf(node, token);
    if (next === undefined) throw invalid(index, `/${tokens.join('/')} does not exist`);
    node = next;
  }
  if (!isContainer(node)) throw invalid(index, `/${tokens.join('/')} is not inside an object or array`);
  return { parent: node, key: tokens[tokens.length - 1] };
}

function childOf(node: unknown, token: string): unknown {
  if (Array.isArray(node)) return /^(0|[1-9]\d*)$/.test(token) ? node[Number(token)] : undefined;
  if (isContainer(node) && Object.prototype.hasOwnProperty.call(node, token)) return (node as Record<string, unknown>)[token];
  return undefined;
}

function arrayIndex(array: unknown[], key: string, index: number, adding: boolean): number {
  if (adding && key === '-') return array.length;
  if (!/^(0|[1-9]\d*)$/.test(key)) throw invalid(index, `'${key}' is not an array index`);
  const position = Number(key);
  if (position > array.length || (!adding && position === array.length)) throw invalid(index, `index ${key} is out of bounds`);
  return position;
}

function get(document: unknown, tokens: string[], index: number): unknown {
  let node = document;
  for (const token of tokens) {
    node = childOf(node, token);
    if (node === undefined) throw invalid(index, `/${tokens.join('/')} does not exist`);
  }
  return node;
}

function remove(document: unknown, tokens: string[], index: number): unknown {
  if (tokens.length === 0) throw invalid(index, 'the whole resource cannot be removed');
  const { parent, key } = parentOf(document, tokens, index);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, key, index, false), 1)[0];
  if (!Object.prototype.hasOwnProperty.call(parent, key)) throw invalid(index, `/${tokens.join('/')} does not exist`);
  const value = parent[key];
  delete parent[key];
  return value;
}

function add(document: unknown, tokens: string[], value: unknown, index: number): unknown {
  if (tokens.length === 0) return value;
  const { parent, key } = parentOf(document, tokens, index);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, index, true), 0, value);
  else parent[key] = value;
  return document;
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => equal(v, b[i]));
  if (!isContainer(a) || !isContainer(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k as never], b[k as never]));
}

/** The document with the operations applied, in order, to a copy (the document itself is not changed). */
export function applyJsonPatch<T>(document: T, operations: JsonPatchOperation[]): T {
  let result: unknown = structuredClone(document);
  operations.forEach((operation, index) => {
    const tokens = pointer(operation.path, index);
    switch (operation.op) {
      case 'add':
        result = add(result, tokens, structuredClone(operation.value), index);
        break;
      case 'remove':
        remove(result, tokens, index);
        break;
      case 'replace':
        get(result, tokens, index);
        if (tokens.length === 0) result = structuredClone(operation.value);
        else {
          remove(result, tokens, index);
          result = add(result, tokens, structuredClone(operation.value), index);
        }
        break;
      case 'move': {
        const from = pointer(operation.from, index);
        if (operation.path.startsWith(`${operation.from}/`)) throw invalid(index, 'a value cannot move into itself');
        result = add(result, tokens, remove(result, from, index), index);
        break;
      }
      case 'copy':
        result = add(result, tokens, structuredClone(get(result, pointer(operation.from, index), index)), index);
        break;
      case 'test':
        if (!equal(get(result, tokens, index), operation.value)) throw invalid(index, `test failed: ${operation.path} is not the value given`);
        break;
    }
  });
  return result as T;
}

/** Whether two JSON values are equal (object key order aside). */
export const jsonEqual = equal;
