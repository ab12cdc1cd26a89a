import { validationError, type ErrorDetail } from '../../../../common/errors';
import { emitParticipations, readParticipation } from './flat-participation';
import { codePhrase, type WebNode, type WebTemplate } from './web-template';
import { isTypeAlternative, isValueNode } from './web-node';

/**
 * FLAT and STRUCTURED compositions (the web-template based formats of the
 * openEHR SDK and EHRbase) to and from canonical RM JSON.
 *
 * FLAT: one key per value, `<tree id>/<node id>[:<index>]/…[|<suffix>]`, the
 * index present on nodes that may repeat (max ≠ 1), e.g.
 * `encounter/body_temperature:0/any_event:1/temperature|magnitude`.
 * STRUCTURED: the same paths as nested objects, every node an array of its
 * instances, suffixes as `|magnitude` members, a plain value as the element.
 */

type Rm = Record<string, any>;
export type Flat = Record<string, unknown>;

/** RM attributes that hold lists (the others hold one object). */
const MULTIPLE = new Set(['content', 'items', 'events', 'activities', 'rows', 'other_participations', 'links', 'participations']);
const RM_VERSION = '1.0.4';
const isObject = (v: unknown): v is Rm => typeof v === 'object' && v !== null && !Array.isArray(v);

const code = (terminology: string, codeString: string) => ({
  _type: 'CODE_PHRASE',
  terminology_id: { _type: 'TERMINOLOGY_ID', value: terminology },
  code_string: codeString,
});
const dvText = (value: string) => ({ _type: 'DV_TEXT', value });
/** ISO 8601 allows a comma as decimal sign; FLAT uses the point. */
const isoPoint = (v: unknown) => (typeof v === 'string' ? v.replace(/(\d{2}:\d{2}:\d{2}),(\d)/, '$1.$2') : v);

// ---- canonical → FLAT --------------------------------------------------------

/** The RM objects a node's steps reach from its parent's object. */
function locate(parent: Rm, node: WebNode, siblings: WebNode[]): Rm[] {
  let current: Rm[] = [parent];
  for (const step of node.steps) {
    const next: Rm[] = [];
    for (const c of current) {
      const v = c[step.attr];
      for (const x of Array.isArray(v) ? v : v !== undefined && v !== null ? [v] : []) {
        if (step.nodeId && x?.archetype_node_id !== step.nodeId) continue;
        next.push(x);
      }
    }
    current = next;
  }
  if (isTypeAlternative(node)) return current.filter((x) => x?._type === undefined || x._type === node.rmType);
  // Siblings that share an archetype path are told apart by name.
  const ownIndex = node.rmType !== 'ELEMENT' && node.steps.length > 1 && node.steps[node.steps.length - 1].attr === 'value' ? node.steps.length - 2 : -1;
  const twins = siblings.filter((s) => s !== node && s.aqlPath === node.aqlPath);
  if (twins.length && node.name) {
    if (ownIndex >= 0) return locateNamed(parent, node, ownIndex);
    current = current.filter((x) => x?.name?.value === node.name);
  }
  return current;
}

function locateNamed(parent: Rm, node: WebNode, ownIndex: number): Rm[] {
  let current: Rm[] = [parent];
  node.steps.forEach((step, i) => {
    current = current.flatMap((c) => {
      const v = c[step.attr];
      return (Array.isArray(v) ? v : v != null ? [v] : []).filter(
        (x: Rm) => (!step.nodeId || x?.archetype_node_id === step.nodeId) && (i !== ownIndex || x?.name?.value === node.name),
      );
    });
  });
  return current;
}

function emitValue(rmType: string, v: Rm, path: string, out: Flat) {
  const put = (suffix: string, value: unknown) => {
    if (value !== undefined && value !== null) out[suffix ? `${path}|${suffix}` : path] = value;
  };
  // An RM String (ACTIVITY.action_archetype_id) is the value itself.
  if (rmType === 'STRING') return put('', v);
  switch (v._type ?? rmType) {
    case 'DV_INTERVAL': {
      // Its bounds, each a value of the type parameter: `…/interval_count/upper`, `…/lower`.
      const parameter = /<(\w+)>$/.exec(rmType)?.[1];
      if (parameter) for (const end of ['upper', 'lower']) if (isObject(v[end])) emitValue(parameter, v[end], `${path}/${end}`, out);
      return;
    }
    case 'DV_QUANTITY':
      put('magnitude', v.magnitude);
      put('unit', v.units);
      put('precision', v.precision);
      put('normal_status', v.normal_status?.code_string);
      return;
    case 'DV_CODED_TEXT':
      put('code', v.defining_code?.code_string);
      put('value', v.value);
      put('terminology', v.defining_code?.terminology_id?.value);
      return;
    case 'DV_TEXT':
      // A coded-text node that holds free text: EHRbase's `|other`.
      put(rmType === 'DV_CODED_TEXT' ? 'other' : '', v.value);
      return;
    case 'DV_ORDINAL':
      put('code', v.symbol?.defining_code?.code_string);
      put('value', v.symbol?.value);
      put('ordinal', v.value);
      return;
    case 'DV_COUNT':
      put('', v.magnitude);
      return;
    case 'DV_PROPORTION':
      put('numerator', v.numerator);
      put('denominator', v.denominator);
      put('type', v.type);
      return;
    case 'DV_IDENTIFIER':
      for (const s of ['id', 'type', 'issuer', 'assigner']) put(s, v[s]);
      return;
    case 'DV_PARSABLE':
      put('value', v.value);
      put('formalism', v.formalism);
      return;
    case 'DV_MULTIMEDIA':
      put('', v.uri?.value);
      put('mediatype', v.media_type?.code_string);
      put('size', v.size);
      put('alternatetext', v.alternate_text);
      return;
    case 'CODE_PHRASE':
      put('code', v.code_string);
      put('terminology', v.terminology_id?.value);
      return;
    case 'PARTY_IDENTIFIED':
    case 'PARTY_RELATED':
      put('name', v.name);
      put('id', v.external_ref?.id?.value);
      put('id_scheme', v.external_ref?.id?.scheme);
      put('id_namespace', v.external_ref?.namespace);
      return;
    case 'PARTY_SELF':
      put('id', v.external_ref?.id?.value);
      return;
    case 'DV_DATE_TIME':
    case 'DV_DATE':
    case 'DV_TIME':
      put('', isoPoint(v.value));
      return;
    default:
      put('', v.value);
  }
}

function emit(node: WebNode, rm: Rm, prefix: string, out: Flat) {
  for (const child of node.children ?? []) {
    locate(rm, child, node.children!).forEach((instance, i) => {
      const path = `${prefix}/${child.id}${child.max !== 1 ? `:${i}` : ''}`;
      if (isValueNode(child)) emitValue(child.rmType, instance, path, out);
      else emit(child, instance, path, out);
    });
  }
  if (node.rmType === 'EVENT_CONTEXT') {
    if (rm.end_time) out[`${prefix}/_end_time`] = isoPoint(rm.end_time.value);
    if (rm.health_care_facility) emitValue('PARTY_IDENTIFIED', rm.health_care_facility, `${prefix}/_health_care_facility`, out);
    emitParticipations(rm, prefix, out);
  }
  if (rm._type === 'INTERVAL_EVENT') {
    if (rm.width) out[`${prefix}/width`] = rm.width.value;
    if (rm.math_function) emitValue('DV_CODED_TEXT', rm.math_function, `${prefix}/math_function`, out);
  }
}

export function canonicalToFlat(composition: Rm, wt: WebTemplate): Flat {
  const root = wt.tree.id;
  const out: Flat = {};
  if (composition.uid?.value) out[`${root}/_uid`] = composition.uid.value;
  emit(wt.tree, composition, root, out);
  return out;
}

// ---- FLAT → canonical --------------------------------------------------------

interface Group {
  fields: Map<string, unknown>;
  children: Map<string, Map<number, Group>>;
}

const newGroup = (): Group => ({ fields: new Map(), children: new Map() });

function groupFlat(flat: Flat, rootId: string, details: ErrorDetail[]): Group {
  const root = newGroup();
  for (const [key, value] of Object.entries(flat)) {
    const [path, suffix = ''] = key.split('|', 2);
    const segments = path.split('/');
    if (segments[0] !== rootId) {
      details.push({ path: key, message: `FLAT paths of this template start with '${rootId}/'` });
      continue;
    }
    let group = root;
    for (const segment of segments.slice(1)) {
      const match = /^(.+?)(?::(\d+))?$/.exec(segment)!;
      const instances = group.children.get(match[1]) ?? new Map<number, Group>();
      group.children.set(match[1], instances);
      const index = Number(match[2] ?? 0);
      const next = instances.get(index) ?? newGroup();
      instances.set(index, next);
      group = next;
    }
    group.fields.set(suffix, value);
  }
  return root;
}

const num = (v: unknown) => (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : v);

function labelOf(node: WebNode | undefined, codeString: unknown): string | undefined {
  for (const input of node?.inputs ?? []) for (const item of input.list ?? []) if (item.value === codeString) return item.label as string;
  return undefined;
}

function buildValue(rmType: string, f: Map<string, unknown>, node?: WebNode): Rm {
  const g = (s: string) => f.get(s);
  switch (rmType) {
    case 'DV_QUANTITY':
      return {
        _type: 'DV_QUANTITY',
        magnitude: num(g('magnitude')),
        units: g('unit'),
        ...(g('precision') !== undefined ? { precision: num(g('precision')) } : {}),
        ...(g('normal_status') !== undefined ? { normal_status: code('openehr_normal_statuses', String(g('normal_status'))) } : {}),
      };
    case 'DV_CODED_TEXT': {
      if (f.has('other')) return dvText(String(g('other')));
      const codeString = String(g('code') ?? '');
      const terminology = (g('terminology') as string | undefined) ?? node?.inputs?.[0]?.terminology ?? codePhrase(node?.constraint)?.terminology ?? 'local';
      return { _type: 'DV_CODED_TEXT', value: g('value') ?? labelOf(node, codeString) ?? codeString, defining_code: code(terminology, codeString) };
    }
    case 'DV_ORDINAL': {
      const codeString = String(g('code') ?? '');
      const item = node?.inputs?.[0]?.list?.find((l) => l.value === codeString);
      return {
        _type: 'DV_ORDINAL',
        value: num(g('ordinal') ?? item?.ordinal),
        symbol: {
          _type: 'DV_CODED_TEXT',
          value: g('value') ?? item?.label ?? codeString,
          defining_code: code((g('terminology') as string) ?? 'local', codeString),
        },
      };
    }
    case 'DV_COUNT':
      return { _type: 'DV_COUNT', magnitude: num(g('')) };
    case 'DV_BOOLEAN':
      return { _type: 'DV_BOOLEAN', value: g('') === 'true' ? true : g('') === 'false' ? false : g('') };
    case 'DV_PROPORTION':
      return { _type: 'DV_PROPORTION', numerator: num(g('numerator')), denominator: num(g('denominator')), type: num(g('type') ?? 0) };
    case 'DV_IDENTIFIER':
      return { _type: 'DV_IDENTIFIER', ...Object.fromEntries(['id', 'type', 'issuer', 'assigner'].filter((s) => f.has(s)).map((s) => [s, g(s)])) };
    case 'DV_PARSABLE':
      return { _type: 'DV_PARSABLE', value: g('value') ?? g(''), formalism: g('formalism') };
    case 'DV_MULTIMEDIA':
      return {
        _type: 'DV_MULTIMEDIA',
        uri: { _type: 'DV_URI', value: g('') },
        media_type: code('IANA_media-types', String(g('mediatype') ?? '')),
        size: num(g('size') ?? 0),
        ...(f.has('alternatetext') ? { alternate_text: g('alternatetext') } : {}),
      };
    case 'CODE_PHRASE':
      return code(String(g('terminology') ?? ''), String(g('code') ?? ''));
    case 'PARTY_PROXY': {
      const id = g('id');
      if (!f.has('name') && id === undefined) return { _type: 'PARTY_SELF' };
      return {
        _type: 'PARTY_IDENTIFIED',
        ...(f.has('name') ? { name: g('name') } : {}),
        ...(id !== undefined
          ? {
              external_ref: {
                _type: 'PARTY_REF',
                id: { _type: 'GENERIC_ID', value: id, scheme: g('id_scheme') ?? 'id' },
                namespace: g('id_namespace') ?? 'local',
                type: 'PERSON',
              },
            }
          : {}),
      };
    }
    default:
      return { _type: rmType, value: g('') };
  }
}

/**
 * A node's value from its FLAT group: an RM String (ACTIVITY.action_archetype_id) is the text itself, a DV_INTERVAL
 * its `upper` and `lower` (an end without one is unbounded).
 */
function valueOf(node: WebNode, group: Group): unknown {
  if (node.rmType === 'STRING') return group.fields.get('');
  const parameter = /^DV_INTERVAL<(\w+)>$/.exec(node.rmType)?.[1];
  if (!parameter) return buildValue(node.rmType, group.fields, node);
  const interval: Rm = { _type: 'DV_INTERVAL' };
  for (const end of ['lower', 'upper']) {
    const bound = [...(group.children.get(end)?.values() ?? [])][0];
    if (bound)
      interval[end] = buildValue(
        parameter,
        bound.fields,
        node.children?.find((c) => c.id === end),
      );
  }
  for (const end of ['lower', 'upper']) {
    if (interval[end]) interval[`${end}_included`] = true;
    interval[`${end}_unbounded`] = !interval[end];
  }
  return interval;
}

/** A new RM object for a node's own step or an intermediate step. */
function rmObject(step: { rmType: string; nodeId?: string; name?: string }): Rm {
  const archetyped = step.nodeId?.startsWith('openEHR-');
  return {
    // EVENT is abstract: an instance is a POINT_EVENT unless it has a width (INTERVAL_EVENT, chosen by the caller).
    _type: step.rmType === 'EVENT' ? 'POINT_EVENT' : step.rmType,
    name: dvText(step.name ?? step.rmType),
    ...(step.nodeId ? { archetype_node_id: step.nodeId } : {}),
    ...(archetyped ? { archetype_details: { _type: 'ARCHETYPED', archetype_id: { _type: 'ARCHETYPE_ID', value: step.nodeId }, rm_version: RM_VERSION } } : {}),
  };
}

function attach(parent: Rm, attr: string, value: Rm) {
  if (MULTIPLE.has(attr)) (parent[attr] ??= []).push(value);
  else parent[attr] = value;
}

const ENTRY = new Set(['OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION', 'ADMIN_ENTRY', 'GENERIC_ENTRY']);

class FlatReader {
  constructor(
    private readonly language: string,
    private readonly details: ErrorDetail[],
  ) {}

  fill(node: WebNode, rm: Rm, group: Group, path: string) {
    for (const [id, instances] of group.children) {
      const child = node.children?.find((c) => c.id === id);
      for (const [index, instance] of [...instances].sort((a, b) => a[0] - b[0])) {
        const at = `${path}/${id}${child && child.max !== 1 ? `:${index}` : ''}`;
        if (!child) {
          this.special(node, rm, id, instance, at);
          continue;
        }
        this.place(child, rm, instance, at);
      }
    }
    if (ENTRY.has(node.rmType)) {
      rm.language ??= code('ISO_639-1', this.language);
      rm.encoding ??= code('IANA_character-sets', 'UTF-8');
      rm.subject ??= { _type: 'PARTY_SELF' };
    }
    // Mandatory in the RM: when the FLAT composition leaves it out, any ACTION archetype, as EHRbase fills it in.
    if (node.rmType === 'ACTIVITY') rm.action_archetype_id ??= '/.*/';
  }

  /** Builds one instance of a node below its parent's RM object. */
  private place(node: WebNode, parentRm: Rm, group: Group, path: string) {
    const steps = node.steps;
    const valueNode = isValueNode(node);
    // Collapsed ELEMENT: its own object is the ELEMENT, its value the last step.
    const own = valueNode && steps.length > 1 && steps[steps.length - 1].attr === 'value' ? steps.length - 2 : steps.length - 1;
    let target = parentRm;
    for (const step of steps.slice(0, own)) {
      const existing = target[step.attr];
      const found = (Array.isArray(existing) ? existing : existing ? [existing] : []).find((x: Rm) => !step.nodeId || x.archetype_node_id === step.nodeId);
      if (found) target = found;
      else {
        const created = rmObject(step);
        attach(target, step.attr, created);
        target = created;
      }
    }
    const ownStep = steps[own];
    if (valueNode && own === steps.length - 1) {
      if (group.fields.size === 0 && group.children.size > 0 && !node.children) return this.details.push({ path, message: 'a value node has no sub-nodes' });
      attach(target, ownStep.attr, valueOf(node, group) as Rm);
      return;
    }
    const object = rmObject({ ...ownStep, rmType: node.rmType === 'EVENT' && group.children.has('width') ? 'INTERVAL_EVENT' : ownStep.rmType });
    // Neither is LOCATABLE: no name.
    if (node.rmType === 'EVENT_CONTEXT' || node.rmType === 'ISM_TRANSITION') delete object.name;
    attach(target, ownStep.attr, object);
    if (valueNode) object.value = valueOf(node, group);
    else this.fill(node, object, group, path);
  }

  /** FLAT attributes that are not web-template nodes: `_end_time`, `_health_care_facility`, `_participation`, interval `width` / `math_function`. */
  private special(node: WebNode, rm: Rm, id: string, group: Group, path: string) {
    if (node.rmType === 'EVENT_CONTEXT' && id === '_end_time') rm.end_time = { _type: 'DV_DATE_TIME', value: group.fields.get('') };
    else if (node.rmType === 'EVENT_CONTEXT' && id === '_health_care_facility') rm.health_care_facility = buildValue('PARTY_PROXY', group.fields);
    else if (node.rmType === 'EVENT_CONTEXT' && id === '_participation') {
      const participation = readParticipation(group.fields, group.children.size > 0, path, this.details);
      if (participation) attach(rm, 'participations', participation);
    } else if (node.rmType === 'EVENT' && id === 'width') {
      rm._type = 'INTERVAL_EVENT';
      rm.width = { _type: 'DV_DURATION', value: group.fields.get('') };
    } else if (node.rmType === 'EVENT' && id === 'math_function')
      rm.math_function = buildValue('DV_CODED_TEXT', group.fields, { inputs: [{ terminology: 'openehr' }] } as WebNode);
    else if (id === '_uid' && node.rmType === 'COMPOSITION') rm.uid = { _type: 'OBJECT_VERSION_ID', value: group.fields.get('') };
    else this.details.push({ path, message: `'${id}' is not a node of the template here` });
  }
}

/**
 * HISTORY.origin is mandatory in the RM and FLAT forms seldom carry it (a HISTORY is no web-template
 * node): where it is missing it is the earliest event time, as openEHR servers fill it in.
 */
function fillHistoryOrigins(value: unknown): void {
  if (Array.isArray(value)) return value.forEach(fillHistoryOrigins);
  if (!isObject(value)) return;
  if (value._type === 'HISTORY' && !value.origin) {
    const times = (Array.isArray(value.events) ? value.events : []).map((e: Rm) => e.time?.value).filter(Boolean) as string[];
    // Compared as instants: event times may carry different UTC offsets.
    const earliest = times.reduce<string | undefined>((min, t) => (min === undefined || Date.parse(t) < Date.parse(min) ? t : min), undefined);
    if (earliest) value.origin = { _type: 'DV_DATE_TIME', value: earliest };
  }
  Object.values(value).forEach(fillHistoryOrigins);
}

export function flatToCanonical(flat: unknown, wt: WebTemplate): Rm {
  if (!isObject(flat)) throw validationError('A FLAT composition is a JSON object of path → value');
  const details: ErrorDetail[] = [];
  const tree = wt.tree;
  const group = groupFlat(flat, tree.id, details);
  const composition: Rm = {
    _type: 'COMPOSITION',
    name: dvText(tree.name ?? tree.id),
    archetype_node_id: tree.nodeId,
    archetype_details: {
      _type: 'ARCHETYPED',
      archetype_id: { _type: 'ARCHETYPE_ID', value: tree.nodeId },
      template_id: { _type: 'TEMPLATE_ID', value: wt.templateId },
      rm_version: RM_VERSION,
    },
  };
  new FlatReader(wt.defaultLanguage, details).fill(tree, composition, group, tree.id);
  if (details.length) throw validationError('The FLAT composition does not match the template', details);
  fillHistoryOrigins(composition);
  composition.content ??= [];
  return composition;
}

// ---- STRUCTURED ⇄ FLAT -------------------------------------------------------

export function flatToStructured(flat: Flat): Rm {
  const root: Rm = {};
  for (const [key, value] of Object.entries(flat)) {
    const [path, suffix] = key.split('|', 2);
    let current = root;
    const segments = path.split('/');
    segments.forEach((segment, i) => {
      const [id, index = '0'] = segment.split(':');
      if (i === 0) {
        current = current[id] ??= {};
        return;
      }
      const list: unknown[] = (current[id] ??= []);
      const last = i === segments.length - 1;
      if (last && suffix === undefined) {
        list[Number(index)] = value;
        return;
      }
      if (!isObject(list[Number(index)])) list[Number(index)] = {};
      current = list[Number(index)] as Rm;
      if (last) current[`|${suffix}`] = value;
    });
  }
  return root;
}

export function structuredToFlat(structured: unknown, wt: WebTemplate): Flat {
  const tree = wt.tree;
  if (!isObject(structured) || !isObject(structured[tree.id]))
    throw validationError(`A STRUCTURED composition of this template is an object with the member '${tree.id}'`, [
      { path: tree.id, message: 'required object' },
    ]);
  const out: Flat = {};
  const walk = (value: Rm, node: WebNode | undefined, path: string) => {
    for (const [key, member] of Object.entries(value)) {
      if (key.startsWith('|')) {
        out[`${path}${key}`] = member;
        continue;
      }
      const child = node?.children?.find((c) => c.id === key);
      const items = Array.isArray(member) ? member : [member];
      items.forEach((item, i) => {
        const at = `${path}/${key}${child && child.max !== 1 ? `:${i}` : ''}`;
        if (isObject(item)) walk(item, child, at);
        else out[at] = item;
      });
    }
  };
  walk(structured[tree.id], tree, tree.id);
  return out;
}
