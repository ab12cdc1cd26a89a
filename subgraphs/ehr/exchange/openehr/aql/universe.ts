import type { ConstraintNode } from '../../../clinical/constraints';
import { rmClassOf, slotInstances } from '../../content';
import type { Source, Universe } from './evaluate';
import { CHILDREN } from './rm-tree';

type Json = Record<string, any>;

/** One readable composition as the query sees it: its ORIGINAL_VERSION (with `data`, the COMPOSITION) and how to read it the CareGraph way. */
export interface QueriedComposition {
  uid: string;
  ehrId: string;
  patientId: string;
  version: Json;
  /** An earlier version than the latest: only `VERSION v[ALL_VERSIONS]` (or a version predicate) binds it. */
  prior?: boolean;
  /**
   * CareGraph's own content form: a demo OPT's simple form, or a JSON
   * template's content, with the definition that locates its archetype slots.
   */
  simple?: { definition: ConstraintNode; content: unknown };
}

export interface QueriedEhr {
  ehrId: string;
  patientId: string;
  /** The EHR object (`ehr_id`, `system_id`, `time_created`) and its EHR_STATUS. */
  ehr: Json;
  status: Json;
  /** The ORIGINAL_VERSION of the latest EHR_STATUS (its `data` is `status`), linked beside the compositions' versions. */
  statusVersion?: Json;
  /** The latest version of the EHR's directory: its root FOLDER, and the directory's id for the access log. */
  directory?: { id: string; root: Json };
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function objectsBelow(root: Json): Json[] {
  const found: Json[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (isObject(v)) {
      found.push(v);
      Object.values(v).forEach(visit);
    }
  };
  visit(root);
  return found;
}

/**
 * The trees an AQL query searches: per EHR, `EHR` with `ehr_status` and its
 * VERSIONs (linked as CHILDREN). Archetyped objects of a composition are
 * linked to CareGraph's simple form of them (the n-th instance of an
 * archetype to the n-th), so the flat paths (`o/systolic/magnitude`) keep
 * answering; a JSON template's slots, which have no RM objects, get stand-ins
 * (`_type` and `archetype_node_id`) so containment finds them. An EHR's
 * directory comes last: each FOLDER links the versions of the compositions its
 * items name, so a FOLDER contains those of its own items and of every folder
 * below it, as EHRbase answers `FOLDER f CONTAINS COMPOSITION c`.
 */
export function buildUniverse(ehrs: QueriedEhr[], compositions: QueriedComposition[]): Universe {
  const sources = new WeakMap<Json, Source>();
  const legacy = new WeakMap<Json, unknown>();
  const prior = new WeakSet<Json>();
  const trees = new Map<string, Json>();
  for (const e of ehrs) {
    const tree: Json = { _type: 'EHR', ...e.ehr, ehr_status: e.status, [CHILDREN]: [] };
    trees.set(e.ehrId, tree);
    const source: Source = { entityType: 'EHR', entityId: e.ehrId, patientId: e.patientId };
    if (e.statusVersion) tree[CHILDREN as unknown as string].push(e.statusVersion);
    for (const object of objectsBelow({ ...tree, version: e.statusVersion })) sources.set(object, source);
    sources.set(tree, source);
  }
  for (const c of compositions) {
    const tree = trees.get(c.ehrId);
    if (!tree) continue;
    const composition = c.version.data as Json;
    if (c.simple) link(composition, c.simple, legacy);
    tree[CHILDREN as unknown as string].push(c.version);
    if (c.prior) prior.add(c.version);
    const source: Source = { entityType: 'Composition', entityId: c.uid, patientId: c.patientId };
    for (const object of objectsBelow(c.version)) sources.set(object, source);
    for (const standIn of composition[CHILDREN as unknown as string] ?? []) for (const object of objectsBelow(standIn)) sources.set(object, source);
  }
  const filed = new Map(compositions.filter((c) => !c.prior).map((c) => [c.uid.split('::')[0], c.version]));
  for (const e of ehrs) {
    if (!e.directory) continue;
    const source: Source = { entityType: 'Directory', entityId: e.directory.id, patientId: e.patientId };
    for (const object of objectsBelow(e.directory.root)) sources.set(object, source);
    const fileIn = (folder: Json) => {
      folder[CHILDREN as unknown as string] = itemIds(folder).flatMap((id) => filed.get(id) ?? []);
      if (Array.isArray(folder.folders)) folder.folders.filter(isObject).forEach(fileIn);
    };
    fileIn(e.directory.root);
    trees.get(e.ehrId)![CHILDREN as unknown as string].push(e.directory.root);
  }
  return {
    ehrs: [...trees.values()],
    sourceOf: (object) => sources.get(object),
    legacyOf: (object) => legacy.get(object),
    isPrior: (object) => prior.has(object),
  };
}

/** The compositions a folder's items name, by versioned object id: an item names one, or one of its versions (the query sees the latest either way). */
const itemIds = (folder: Json): string[] =>
  (Array.isArray(folder.items) ? folder.items : []).flatMap((item: unknown) =>
    isObject(item) && typeof item.id?.value === 'string' ? [item.id.value.split('::')[0]] : [],
  );

/** Every composition filed in a directory, in any of its folders. */
export function filedCompositionIds(root: Json): string[] {
  const found = new Set<string>();
  const visit = (folder: Json) => {
    itemIds(folder).forEach((id) => found.add(id));
    if (Array.isArray(folder.folders)) folder.folders.filter(isObject).forEach(visit);
  };
  visit(root);
  return [...found];
}

function link(composition: Json, simple: NonNullable<QueriedComposition['simple']>, legacy: WeakMap<Json, unknown>): void {
  const instances = slotInstances(simple.definition, simple.content);
  if (Array.isArray(composition.content)) {
    legacy.set(composition, { content: simple.content });
    const byArchetype = new Map<string, Json[]>();
    for (const object of objectsBelow({ content: composition.content }))
      if (typeof object.archetype_node_id === 'string' && object.archetype_node_id.startsWith('openEHR-'))
        byArchetype.set(object.archetype_node_id, [...(byArchetype.get(object.archetype_node_id) ?? []), object]);
    const seen = new Map<string, number>();
    for (const instance of instances) {
      const n = seen.get(instance.archetypeId) ?? 0;
      seen.set(instance.archetypeId, n + 1);
      const object = byArchetype.get(instance.archetypeId)?.[n];
      if (object) legacy.set(object, instance.value);
    }
    return;
  }
  // A JSON template's composition holds its content as is: stand-ins for its slots, each inside the one whose path it extends.
  const placed: Array<{ path: string[]; object: Json }> = [];
  composition[CHILDREN as unknown as string] = [];
  for (const instance of instances) {
    const object: Json = { _type: rmClassOf(instance.archetypeId), archetype_node_id: instance.archetypeId, [CHILDREN]: [] };
    legacy.set(object, instance.value);
    const parent = [...placed].reverse().find((p) => p.path.length < instance.path.length && p.path.every((s, i) => instance.path[i] === s));
    (parent ? parent.object : composition)[CHILDREN as unknown as string].push(object);
    placed.push({ path: instance.path, object });
  }
}
