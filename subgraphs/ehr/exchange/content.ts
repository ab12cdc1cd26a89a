import { findArchetype } from '../clinical/archetypes';
import type { ConstraintNode } from '../clinical/constraints';

/**
 * Reading composition content the way the exchange APIs need it: where the
 * archetype slots are (FHIR mapping, AQL containment) and which time is the
 * clinical one (FHIR effective/date, openEHR context/start_time).
 */

export interface SlotInstance {
  archetypeId: string;
  /** Content path segments; list items are their index. */
  path: string[];
  value: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The RM class of an archetype id: `openEHR-EHR-OBSERVATION.pulse.v2` → `OBSERVATION`. */
export function rmClassOf(archetypeId: string): string | undefined {
  return /^openEHR-EHR-([A-Z_]+)\./.exec(archetypeId)?.[1];
}

/** Every filled archetype slot of the content, outer slots before the slots inside them. */
export function slotInstances(definition: ConstraintNode, content: unknown): SlotInstance[] {
  const found: SlotInstance[] = [];
  const visit = (node: ConstraintNode, value: unknown, path: string[], depth: number) => {
    if (value === undefined || value === null || depth > 24) return;
    switch (node.type) {
      case 'archetype': {
        found.push({ archetypeId: node.archetypeId, path, value });
        const archetype = findArchetype(node.archetypeId);
        if (archetype) visit(archetype.definition, value, path, depth + 1);
        return;
      }
      case 'object':
        if (isObject(value)) for (const [name, child] of Object.entries(node.children)) visit(child, value[name], [...path, name], depth + 1);
        return;
      case 'list':
        if (Array.isArray(value)) value.forEach((item, index) => visit(node.items, item, [...path, String(index)], depth + 1));
        return;
      default:
        return;
    }
  };
  visit(definition, content, [], 0);
  return found;
}

/** The top-level archetype slots a template defines, in definition order (whether filled or not). */
export function topLevelSlots(definition: ConstraintNode): Array<{ key: string; archetypeId: string }> {
  if (definition.type !== 'object') return [];
  return Object.entries(definition.children).flatMap(([key, node]) => (node.type === 'archetype' ? [{ key, archetypeId: node.archetypeId }] : []));
}

/**
 * The clinical time of a composition: its first date-time element (definition
 * order, slots included), else its first date, else undefined (callers fall
 * back to the commit time).
 */
export function clinicalTime(definition: ConstraintNode, content: unknown): string | undefined {
  let dateTime: string | undefined;
  let date: string | undefined;
  const visit = (node: ConstraintNode, value: unknown, depth: number) => {
    if (dateTime || value === undefined || value === null || depth > 24) return;
    switch (node.type) {
      case 'date_time':
        if (typeof value === 'string') dateTime = value;
        return;
      case 'date':
        if (typeof value === 'string') date ??= value;
        return;
      case 'archetype': {
        const archetype = findArchetype(node.archetypeId);
        if (archetype) visit(archetype.definition, value, depth + 1);
        return;
      }
      case 'object':
        if (isObject(value)) for (const [name, child] of Object.entries(node.children)) visit(child, value[name], depth + 1);
        return;
      default:
        return;
    }
  };
  visit(definition, content, 0);
  return dateTime ?? date;
}

/** The value at a content path (segments), or undefined. */
export function valueAt(value: unknown, path: string[]): unknown {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (isObject(current)) current = current[segment];
    else return undefined;
  }
  return current;
}

/**
 * The RM objects at an archetype path below a canonical RM object
 * (`/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value`): each step
 * an attribute, optionally narrowed to one archetype node id; lists fan out.
 */
export function rmAll(rm: unknown, path: string): Array<Record<string, any>> {
  let current: unknown[] = [rm];
  for (const segment of path.split('/').filter(Boolean)) {
    const match = /^([a-z_]+)(?:\[([^\]]+)\])?$/.exec(segment);
    if (!match) return [];
    current = current.flatMap((object) => {
      if (!isObject(object)) return [];
      const value = object[match[1]];
      return (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]).filter(
        (x) => !match[2] || (isObject(x) && x.archetype_node_id === match[2]),
      );
    });
  }
  return current.filter(isObject);
}

/** The first RM object at an archetype path, or undefined. */
export function rmAt(rm: unknown, path: string): Record<string, any> | undefined {
  return rmAll(rm, path)[0];
}

/** The report composition's context elements: a clinical note's title and document type share this node id, told apart by name. */
const REPORT_CONTEXT_ITEM = '/context/other_context[at0001]/items[at0007]';

/** The value of the first report context element of that name. */
export const reportContextValue = (composition: unknown, name: 'Title' | 'Document type'): Record<string, any> | undefined =>
  rmAll(composition, REPORT_CONTEXT_ITEM).find((item) => item.name?.value === name)?.value;

/**
 * A clinical note's document type: the coded value of the context element named "Document type" (none without
 * a code). One reading for the FHIR mapping (DocumentReference.type) and the clinical index, so they agree.
 */
export function documentType(composition: unknown): { code: string; terminology?: string; text?: string } | undefined {
  const value = reportContextValue(composition, 'Document type');
  const code = value?.defining_code?.code_string;
  if (typeof code !== 'string' || code === '') return undefined;
  return { code, terminology: value?.defining_code?.terminology_id?.value, text: value?.value };
}
