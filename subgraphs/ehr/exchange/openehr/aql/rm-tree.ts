/**
 * The RM trees AQL searches: what type an object is (also where canonical JSON
 * leaves `_type` out) and which objects lie below one.
 */

type Json = Record<string, any>;

/** Objects CareGraph links into the tree without an RM attribute (an EHR's versions). */
export const CHILDREN = Symbol('children');

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const ITEM_STRUCTURES = ['ITEM_TREE', 'ITEM_LIST', 'ITEM_SINGLE', 'ITEM_TABLE'];
const SUBTYPES: Record<string, string[]> = {
  CONTENT_ITEM: ['SECTION', 'OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION', 'ADMIN_ENTRY'],
  ENTRY: ['OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION', 'ADMIN_ENTRY'],
  CARE_ENTRY: ['OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION'],
  EVENT: ['POINT_EVENT', 'INTERVAL_EVENT'],
  ITEM_STRUCTURE: ITEM_STRUCTURES,
  // What an OBSERVATION's data, state or protocol may be: a HISTORY or an item structure (EHRbase finds both).
  DATA_STRUCTURE: ['HISTORY', ...ITEM_STRUCTURES],
  ITEM: ['CLUSTER', 'ELEMENT'],
  VERSION: ['ORIGINAL_VERSION'],
};
/**
 * The RM type of an object canonical JSON may leave without `_type`: the attribute's own type where it has no
 * subtypes (by `<parent type>.<attribute>`, or the attribute alone).
 */
const IMPLIED_TYPES: Record<string, string> = {
  'COMPOSITION.context': 'EVENT_CONTEXT',
  'OBSERVATION.data': 'HISTORY',
  'OBSERVATION.state': 'HISTORY',
  'INSTRUCTION.activities': 'ACTIVITY',
  'ACTION.ism_transition': 'ISM_TRANSITION',
  'ACTION.instruction_details': 'INSTRUCTION_DETAILS',
  feeder_audit: 'FEEDER_AUDIT',
  'EHR.ehr_id': 'HIER_OBJECT_ID',
  'EHR.system_id': 'HIER_OBJECT_ID',
  'EHR.time_created': 'DV_DATE_TIME',
  'FOLDER.folders': 'FOLDER',
  'FOLDER.items': 'OBJECT_REF',
};
const impliedTypes = new WeakMap<Json, string>();
export const typeOf = (object: Json): string | undefined => object._type ?? impliedTypes.get(object);
/** Notes the type `child` has as the value of `parent[attribute]`, when it does not say. */
export function implyType(parent: Json, attribute: string, child: unknown): void {
  const implied = IMPLIED_TYPES[`${typeOf(parent)}.${attribute}`] ?? IMPLIED_TYPES[attribute];
  if (implied && isObject(child) && child._type === undefined) impliedTypes.set(child, implied);
}
/** Whether an object is of an RM class or one of its subtypes. */
export function isClass(object: Json, rmClass: string): boolean {
  const type = typeOf(object);
  return type !== undefined && (type === rmClass || (SUBTYPES[rmClass]?.includes(type) ?? false));
}

/** An object answered whole says its type, as EHRbase writes it, where the stored JSON left it implied. */
export function withType(found: unknown): unknown {
  return isObject(found) && found._type === undefined && impliedTypes.has(found) ? { _type: impliedTypes.get(found), ...found } : found;
}

function children(object: Json): Json[] {
  const found: Json[] = [];
  const add = (key: string | undefined, v: unknown) => {
    if (Array.isArray(v)) v.forEach((item) => add(key, item));
    else if (isObject(v)) {
      if (key) implyType(object, key, v);
      found.push(v);
    }
  };
  for (const [key, value] of Object.entries(object)) add(key, value);
  add(undefined, object[CHILDREN as unknown as string]);
  return found;
}

/**
 * Every object below `root` (not `root` itself), depth first, document order, each once (an EHR's status is
 * both its `ehr_status` and its status VERSION's `data`); `skip` leaves an object and all below it out.
 */
export function descendants(root: Json, skip?: (object: Json) => boolean): Json[] {
  const found: Json[] = [];
  const seen = new Set<Json>();
  const stack = children(root).reverse();
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next) || skip?.(next)) continue;
    seen.add(next);
    found.push(next);
    stack.push(...children(next).reverse());
  }
  return found;
}
