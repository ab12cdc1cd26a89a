import type { OptObject } from './parse';

/** A web-template node and how one is made: the JSON fields, plus (hidden from the JSON) its RM steps and OPT constraint. */

export interface WebInput {
  suffix?: string;
  type: string;
  list?: Array<Record<string, unknown>>;
  terminology?: string;
  validation?: Record<string, unknown>;
  listOpen?: boolean;
  defaultValue?: string;
}

/** One RM step: attribute name, and the object found there. */
export interface RmStep {
  attr: string;
  rmType: string;
  nodeId?: string;
  name?: string;
  /** The object may be left out although the OPT gives it occurrences 1..1: its (single) attribute's existence is 0..1. */
  optional?: boolean;
}

export interface WebNode {
  id: string;
  name?: string;
  localizedName?: string;
  rmType: string;
  nodeId?: string;
  min: number;
  max: number;
  /** Ids of the sibling nodes this one describes (an event's state depends on its data). */
  dependsOn?: string[];
  localizedNames?: Record<string, string>;
  localizedDescriptions?: Record<string, string>;
  aqlPath: string;
  inputs?: WebInput[];
  /** DV_PROPORTION: the kinds allowed (`ratio`, `percent`…). */
  proportionTypes?: string[];
  inContext?: boolean;
  /** The archetype's bindings of the node id: terminology → bound code. */
  termBindings?: Record<string, { value: string; terminologyId: string }>;
  children?: WebNode[];
  /** Not serialised: the RM steps from the parent node's object; the last one is this node's own object. */
  steps: RmStep[];
  /** Not serialised: this node's constraint in the OPT (the value's for a folded ELEMENT). */
  constraint?: OptObject;
  /** Not serialised: a folded ELEMENT also accepts DV_TEXT (coded text with `|other`). */
  textAlternative?: boolean;
}

function hide<T extends object>(target: T, key: string, value: unknown): T {
  Object.defineProperty(target, key, { value, enumerable: false, writable: true });
  return target;
}

/** The order EHRbase writes a node's fields in (the JSON is read by people too). */
const FIELD_ORDER = [
  'id',
  'name',
  'localizedName',
  'rmType',
  'nodeId',
  'min',
  'max',
  'dependsOn',
  'localizedNames',
  'localizedDescriptions',
  'aqlPath',
  'inputs',
  'proportionTypes',
  'termBindings',
  'children',
  'inContext',
];

export function makeNode(
  fields: Omit<WebNode, 'steps' | 'constraint' | 'textAlternative'>,
  steps: RmStep[],
  constraint?: OptObject,
  textAlternative = false,
): WebNode {
  const own = fields as Record<string, unknown>;
  const keys = [...FIELD_ORDER.filter((k) => k in own), ...Object.keys(own).filter((k) => !FIELD_ORDER.includes(k))];
  const node = Object.fromEntries(keys.map((k) => [k, own[k]])) as unknown as WebNode;
  hide(node, 'steps', steps);
  hide(node, 'constraint', constraint);
  hide(node, 'textAlternative', textAlternative);
  return node;
}

/** Sets a field of a made node in its place in EHRbase's order. */
export function setField<K extends keyof WebNode>(node: WebNode, key: K, value: WebNode[K]): void {
  const own = node as unknown as Record<string, unknown>;
  const at = FIELD_ORDER.indexOf(key);
  const later = Object.keys(own).filter((k) => k !== key && (FIELD_ORDER.indexOf(k) > at || !FIELD_ORDER.includes(k)));
  const saved = later.map((k) => [k, own[k]] as const);
  for (const k of later) delete own[k];
  own[key] = value;
  for (const [k, v] of saved) own[k] = v;
}

/** A node that holds one data value (a DV_INTERVAL too, whose `upper` and `lower` nodes are its parts). */
export const isValueNode = (node: WebNode) => (!node.children || node.rmType.startsWith('DV_INTERVAL<')) && node.rmType !== 'EVENT_CONTEXT';

/**
 * One data type of an ELEMENT whose value may be one of several (`quantity_value`, `count_value`): its one step is
 * the value. The alternatives share the ELEMENT's names and path; the value's `_type` tells which one holds it.
 */
export const isTypeAlternative = (node: WebNode) => node.steps.length === 1 && node.steps[0].attr === 'value' && node.rmType.startsWith('DV_');

/** An RM attribute shown as a context node (`language`, `time`, `composer`…), named after it as EHRbase does (`Start_time`). */
export function contextNode(id: string, rmType: string, parentAql: string, min = 0, inputs?: WebInput[], inContext = true): WebNode {
  const name = id.charAt(0).toUpperCase() + id.slice(1);
  return makeNode({ id, name, rmType, min, max: 1, aqlPath: `${parentAql}/${id}`, ...(inputs ? { inputs } : {}), ...(inContext ? { inContext } : {}) }, [
    { attr: id, rmType },
  ]);
}
