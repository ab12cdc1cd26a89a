import type { ErrorDetail } from '../../../../common/errors';
import { RM_XML_SCHEMA } from './rm-xml-schema';
import { primitiveOf, typeOf } from './rm-xml';

const MAX_DEPTH = 64;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `actual` is `declared` or one of its subtypes in the RM schema. */
function conforms(actual: string, declared: string): boolean {
  for (let t: string | undefined = actual; t; t = RM_XML_SCHEMA.types[t]?.base) if (t === declared) return true;
  return false;
}

/** The `_type` an object left untyped has: its declared type when concrete; an OBJECT_ID by its value, as clients write subject ids. */
function implicitType(value: Record<string, unknown>, declared: string): string {
  if (declared !== 'OBJECT_ID') return declared;
  return typeof value.value === 'string' && UUID.test(value.value) ? 'HIER_OBJECT_ID' : 'GENERIC_ID';
}

/**
 * Canonical RM JSON of a value of a declared type, checked by the published
 * RM schema's type table (rm-xml-schema.ts): every object's `_type` a known,
 * concrete subtype of its declared type, only the attributes the type has,
 * arrays exactly where the attribute repeats, primitives of the right JSON
 * type, and every LOCATABLE with its `archetype_node_id` and `name` (the RM's
 * invariants). The value comes back with `_type` on every object, as
 * canonical JSON writes it. For content no template constrains: an
 * EHR_STATUS with its `other_details`.
 */
export function canonicalRm(value: unknown, declared: string, path = '', depth = 0): { value: unknown; errors: ErrorDetail[] } {
  const fail = (at: string, message: string) => ({ value, errors: [{ path: at, message }] });
  if (depth > MAX_DEPTH) return fail(path, `nests deeper than ${MAX_DEPTH} levels`);
  const primitive = primitiveOf(declared);
  if (primitive) return typeof value === primitive ? { value, errors: [] } : fail(path, `a ${primitive} is expected`);
  if (!isObject(value)) return fail(path, `an object of type ${declared} is expected`);
  const actual = typeof value._type === 'string' ? value._type : implicitType(value, declared);
  const type = typeOf(actual);
  if (!type) return fail(`${path}/_type`, `unknown RM type ${actual}`);
  if (!conforms(actual, declared)) return fail(`${path}/_type`, `${actual} is not a ${declared}`);
  if (type.abstract) return fail(path, `${actual} is abstract: give _type`);
  const errors: ErrorDetail[] = [];
  const out: Record<string, unknown> = { _type: actual };
  if (conforms(actual, 'LOCATABLE'))
    for (const required of ['archetype_node_id', 'name']) if (value[required] === undefined) errors.push({ path: `${path}/${required}`, message: 'required' });
  for (const [name, child] of Object.entries(value)) {
    if (name === '_type') continue;
    if (type.attributes.includes(name)) {
      if (typeof child !== 'string') errors.push({ path: `${path}/${name}`, message: 'a string is expected' });
      out[name] = child;
      continue;
    }
    const spec = type.elements.get(name);
    if (!spec) {
      errors.push({ path: `${path}/${name}`, message: `${actual} has no attribute ${name}` });
      continue;
    }
    if (!spec.many) {
      const checked = canonicalRm(child, spec.type, `${path}/${name}`, depth + 1);
      errors.push(...checked.errors);
      out[name] = checked.value;
    } else if (!Array.isArray(child)) errors.push({ path: `${path}/${name}`, message: 'an array is expected' });
    else
      out[name] = child.map((item, i) => {
        const checked = canonicalRm(item, spec.type, `${path}/${name}[${i}]`, depth + 1);
        errors.push(...checked.errors);
        return checked.value;
      });
  }
  return { value: errors.length ? value : out, errors };
}
