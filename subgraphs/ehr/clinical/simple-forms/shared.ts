import { findArchetype } from '../archetypes';
import type { ConstraintNode } from '../constraints';
import type { Flat } from '../opt/flat';

/** What the simple forms share: the form's shape and the FLAT writing and reading helpers. */
export type Json = Record<string, any>;

export interface SimpleForm {
  /** The FLAT root (web-template tree id) of the template the form maps to. */
  root: string;
  /** Constraints of the simple form. */
  definition: ConstraintNode;
  /** A valid simple body → FLAT, written by `composer`. */
  toFlat(content: Json, composer: string): Flat;
  /** FLAT → the simple body (what the form can hold of it). */
  fromFlat(flat: Flat): Json;
}

export const slot = (archetypeId: string, required = true): ConstraintNode => ({ type: 'archetype', archetypeId, required });

/** The text of a code in the value set of an archetype's coded element (the simple form's own constraints). */
export function textOf(archetypeId: string, element: string, code: string): string | undefined {
  const definition = findArchetype(archetypeId)?.definition;
  const node = definition?.type === 'object' ? definition.children[element] : undefined;
  return node?.type === 'coded_text' ? node.valueSet.find((v) => v.code === code)?.value : undefined;
}
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The COMPOSITION attributes the RM requires, as CareGraph writes them for API bodies (as its openEHR envelope does). */
export function envelope(root: string, composer: string, startTime: string): Flat {
  return {
    [`${root}/context/start_time`]: startTime,
    [`${root}/context/setting|code`]: '238',
    [`${root}/context/setting|value`]: 'other care',
    [`${root}/context/setting|terminology`]: 'openehr',
    [`${root}/category|code`]: '433',
    [`${root}/category|value`]: 'event',
    [`${root}/category|terminology`]: 'openehr',
    [`${root}/language|code`]: 'en',
    [`${root}/language|terminology`]: 'ISO_639-1',
    [`${root}/territory|code`]: 'NL',
    [`${root}/territory|terminology`]: 'ISO_3166-1',
    [`${root}/composer|name`]: composer,
  };
}

/** The ENTRY attributes FLAT readers default (language, encoding), written out so FLAT round-trips compare equal. */
export function entry(path: string): Flat {
  return {
    [`${path}/language|code`]: 'en',
    [`${path}/language|terminology`]: 'ISO_639-1',
    [`${path}/encoding|code`]: 'UTF-8',
    [`${path}/encoding|terminology`]: 'IANA_character-sets',
  };
}

export function putQuantity(flat: Flat, path: string, q: Json | undefined) {
  if (!isObject(q)) return;
  flat[`${path}|magnitude`] = q.magnitude;
  flat[`${path}|unit`] = q.unit;
}

export function getQuantity(flat: Flat, path: string): Json | undefined {
  if (!(`${path}|magnitude` in flat) && !(`${path}|unit` in flat)) return undefined;
  return { magnitude: flat[`${path}|magnitude`], unit: flat[`${path}|unit`] };
}

export function putCoded(flat: Flat, path: string, terminology: string, code: string, value: string) {
  Object.assign(flat, { [`${path}|code`]: code, [`${path}|value`]: value, [`${path}|terminology`]: terminology });
}

/** Indexed FLAT nodes below a path (`…/laboratory_analyte_result:0`, `:1`…), in index order. */
export function indexes(flat: Flat, prefix: string): number[] {
  const found = new Set<number>();
  for (const key of Object.keys(flat)) {
    const match = key.startsWith(`${prefix}:`) ? /^:(\d+)[/|]/.exec(key.slice(prefix.length)) : null;
    if (match) found.add(Number(match[1]));
  }
  return [...found].sort((a, b) => a - b);
}
