import type { NumberRange, OperationalTemplate, OptAttribute, OptObject } from './parse';
import { contextNode, makeNode, setField, type RmStep, type WebInput, type WebNode } from './web-node';
import { ismTransitionNode } from './ism-transition';

export type { WebInput, WebNode } from './web-node';

/**
 * The web template of an operational template: the form-oriented tree that the
 * openEHR SDK and EHRbase derive from an OPT (format version 2.3). Structural
 * RM objects that carry no clinical meaning of their own (HISTORY, ITEM_TREE…)
 * are folded into their parent, and an ELEMENT with one value type is
 * represented by its value. Each node also keeps, out of the JSON, the RM steps
 * from its parent node's object to its own and its OPT constraint: FLAT
 * conversion and validation walk the same tree.
 */

export interface WebTemplate {
  templateId: string;
  version: string;
  defaultLanguage: string;
  languages: string[];
  tree: WebNode;
}

const TRANSPARENT = new Set(['HISTORY', 'ITEM_TREE', 'ITEM_LIST', 'ITEM_SINGLE', 'ITEM_TABLE', 'ITEM_STRUCTURE']);
const EVENTS = new Set(['EVENT', 'POINT_EVENT', 'INTERVAL_EVENT']);
const ENTRIES = new Set(['OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION', 'ADMIN_ENTRY', 'GENERIC_ENTRY']);
/** RM attributes the web template shows as their own context nodes, not through the OPT. */
const CONTEXT_ATTRIBUTES = new Set([
  'expiry_time',
  'category',
  'language',
  'territory',
  'composer',
  'encoding',
  'subject',
  'time',
  'start_time',
  'setting',
  'name',
]);

/** `*Any event(en)` → `any_event_en`: the form id EHRbase derives from a node's name. */
export function webId(name: string): string {
  const id = name
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
  return id || 'node';
}

const maxOf = (max: number | null) => (max === null ? -1 : max);
/** A single attribute the OPT lets be absent: its one object is then optional whatever its own occurrences say. */
const isOptional = (a: OptAttribute) => !a.multiple && a.existence.min === 0;

/** A template's rename of a node: its `name` constrained to one text (`name/value` ∈ {"Title"}). */
function templateName(o: OptObject): string | undefined {
  const value = o.attributes.find((a) => a.name === 'name')?.children[0]?.attributes.find((a) => a.name === 'value')?.children[0];
  return value?.primitive?.list?.length === 1 ? value.primitive.list[0] : undefined;
}

/** The term text and description of an object's node id in its archetype; its name, when the template renames it. */
function term(o: OptObject, language: string) {
  const code = o.kind === 'archetype_root' ? 'at0000' : o.nodeId;
  const t = o.terms.get(code);
  const name = templateName(o) ?? t?.text ?? o.rmType;
  return {
    name,
    localizedName: name,
    localizedNames: { [language]: name },
    ...(t?.description !== undefined ? { localizedDescriptions: { [language]: t.description } } : {}),
  };
}

function range(r: NumberRange | undefined) {
  if (!r || (r.min === undefined && r.max === undefined)) return undefined;
  return {
    ...(r.min !== undefined ? { minOp: r.minExcluded ? '>' : '>=', min: r.min } : {}),
    ...(r.max !== undefined ? { maxOp: r.maxExcluded ? '<' : '<=', max: r.max } : {}),
  };
}

/** The code phrase constraint inside a DV_CODED_TEXT / CODE_PHRASE constraint object. */
export function codePhrase(o: OptObject | undefined): OptObject | undefined {
  if (!o) return undefined;
  if (o.kind === 'code_phrase') return o;
  return o.attributes.find((a) => a.name === 'defining_code')?.children[0];
}

/** The primitive constraint on an attribute of a data value (e.g. DV_COUNT.magnitude). */
export function primitiveOf(o: OptObject | undefined, attr: string) {
  return o?.attributes.find((a) => a.name === attr)?.children[0]?.primitive;
}

function inputsFor(rmType: string, o: OptObject | undefined, language: string, textAlternative: boolean): WebInput[] | undefined {
  switch (rmType) {
    case 'DV_QUANTITY': {
      const items = o?.quantities ?? [];
      const single = items.length === 1 ? items[0] : undefined;
      const magnitude = range(single?.magnitude);
      return [
        { suffix: 'magnitude', type: 'DECIMAL', ...(magnitude ? { validation: { range: magnitude } } : {}) },
        {
          suffix: 'unit',
          type: 'CODED_TEXT',
          ...(items.length
            ? {
                list: items.map((q) => {
                  const r = range(q.magnitude);
                  const precision = q.precision !== undefined ? { minOp: '>=', min: q.precision, maxOp: '<=', max: q.precision } : undefined;
                  return {
                    value: q.unit,
                    label: q.unit,
                    ...(r || precision ? { validation: { ...(r ? { range: r } : {}), ...(precision ? { precision } : {}) } } : {}),
                  };
                }),
              }
            : {}),
        },
      ];
    }
    case 'DV_CODED_TEXT': {
      const phrase = codePhrase(o);
      const codes = phrase?.codes ?? [];
      const local = phrase?.terminology === 'local';
      const list = codes.map((code) => {
        const t = local ? phrase.terms.get(code) : undefined;
        return {
          value: code,
          label: t?.text ?? code,
          ...(t ? { localizedLabels: { [language]: t.text } } : {}),
          ...(t?.description !== undefined ? { localizedDescriptions: { [language]: t.description } } : {}),
        };
      });
      const inputs: WebInput[] = [
        {
          suffix: 'code',
          type: list.length ? 'CODED_TEXT' : 'TEXT',
          ...(list.length ? { list } : {}),
          // A coded text that may also be plain text: the list is open (`|other`).
          ...(list.length && textAlternative ? { listOpen: true } : {}),
          ...(phrase?.assumedCode ? { defaultValue: phrase.assumedCode } : {}),
          // A code list of the archetype's own terms names no terminology; free codes name theirs on both inputs.
          ...(phrase?.terminology && (!local || !list.length) ? { terminology: phrase.terminology } : {}),
        },
      ];
      if (!list.length) inputs.push({ suffix: 'value', type: 'TEXT', ...(phrase?.terminology ? { terminology: phrase.terminology } : {}) });
      if (textAlternative) inputs.push({ suffix: 'other', type: 'TEXT' });
      return inputs;
    }
    case 'DV_ORDINAL':
      return [
        {
          type: 'CODED_TEXT',
          list: (o?.ordinals ?? []).map((v) => {
            const t = v.terminology === 'local' ? o!.terms.get(v.code) : undefined;
            return {
              value: v.code,
              label: t?.text ?? v.code,
              ...(t ? { localizedLabels: { [language]: t.text }, localizedDescriptions: { [language]: t.description ?? '' } } : {}),
              ordinal: v.value,
            };
          }),
        },
      ];
    case 'DV_COUNT': {
      const r = range(primitiveOf(o, 'magnitude')?.range);
      return [{ type: 'INTEGER', ...(r ? { validation: { range: r } } : {}) }];
    }
    case 'DV_PROPORTION':
      return [
        { suffix: 'numerator', type: 'DECIMAL' },
        { suffix: 'denominator', type: 'DECIMAL' },
      ];
    case 'DV_DATE_TIME':
    case 'DV_DATE':
    case 'DV_TIME': {
      // The OPT's pattern of a partial date or time (`yyyy-??-XX`) is the input's validation.
      const pattern = primitiveOf(o, 'value')?.pattern;
      return [{ type: rmType === 'DV_DATE_TIME' ? 'DATETIME' : rmType.slice(3), ...(pattern ? { validation: { pattern } } : {}) }];
    }
    case 'DV_IDENTIFIER':
      return ['id', 'type', 'issuer', 'assigner'].map((suffix) => ({ suffix, type: 'TEXT' }));
    case 'DV_PARSABLE':
      return [
        { suffix: 'value', type: 'TEXT' },
        { suffix: 'formalism', type: 'TEXT' },
      ];
    case 'PARTY_PROXY':
      return ['id', 'id_scheme', 'id_namespace', 'name'].map((suffix) => ({ suffix, type: 'TEXT' }));
    case 'DV_BOOLEAN':
      return [{ type: 'BOOLEAN' }];
    case 'DV_DURATION':
      // No field of a duration is negative.
      return ['year', 'month', 'day', 'week', 'hour', 'minute', 'second'].map((suffix) => ({
        suffix,
        type: 'INTEGER',
        validation: { range: { min: 0, minOp: '>=' } },
      }));
    case 'DV_TEXT': {
      const list = primitiveOf(o, 'value')?.list;
      return [{ type: 'TEXT', ...(list ? { list: list.map((v) => ({ value: v, label: v })) } : {}) }];
    }
    case 'DV_URI':
    case 'DV_EHR_URI':
    case 'DV_MULTIMEDIA':
      return [{ type: 'TEXT' }];
    default:
      return undefined;
  }
}

const PROPORTION_KINDS = ['ratio', 'unitary', 'percent', 'fraction', 'integer_fraction'];
/** The kinds of proportion a DV_PROPORTION allows (its `type` list, `0` ratio … `4` integer fraction; all without one). */
function proportionTypes(o: OptObject | undefined): string[] {
  const list = primitiveOf(o, 'type')?.list;
  return list?.length ? list.map((v) => PROPORTION_KINDS[Number(v)] ?? v) : PROPORTION_KINDS;
}

class Builder {
  constructor(private readonly language: string) {}

  /** Significant nodes below one object: its attributes' children (folded where transparent). */
  childrenOf(o: OptObject, aql: string, root: OptObject): WebNode[] {
    const nodes: WebNode[] = [];
    const from = new Map<WebNode, string>();
    for (const a of o.attributes) {
      // An ACTION's ism_transition alternatives become one context node (contextChildren).
      // An ACTIVITY's action_archetype_id follows its timing (contextChildren).
      if (
        CONTEXT_ATTRIBUTES.has(a.name) ||
        (o.rmType === 'ACTION' && a.name === 'ism_transition') ||
        (o.rmType === 'ACTIVITY' && a.name === 'action_archetype_id')
      )
        continue;
      for (const child of a.children) {
        for (const node of this.visit(child, a, aql, [], root)) {
          from.set(node, a.name);
          nodes.push(node);
        }
      }
    }
    dedupe(nodes);
    // What an observation's protocol and an event's state describe depends on the data recorded beside them:
    // EHRbase lists those nodes' ids (`dependsOn`) on each of their nodes.
    const dependent = o.rmType === 'OBSERVATION' ? 'protocol' : EVENTS.has(o.rmType) ? 'state' : undefined;
    const data = nodes.filter((n) => from.get(n) === 'data').map((n) => n.id);
    if (dependent && data.length) for (const node of nodes) if (from.get(node) === dependent) setField(node, 'dependsOn', data);
    return nodes;
  }

  visit(o: OptObject, attribute: OptAttribute, parentAql: string, steps: RmStep[], root: OptObject): WebNode[] {
    const attr = attribute.name;
    if (o.kind === 'internal_ref') {
      const target = resolveInternalRef(root, o.targetPath ?? '');
      if (!target) return [];
      o = { ...target, occurrences: o.occurrences };
    }
    if (o.kind === 'slot') return [];
    const archetypeRoot = o.kind === 'archetype_root' ? o : root;
    const aql = `${parentAql}/${attr}${o.nodeId ? `[${o.nodeId}]` : ''}`;
    const t = term(o, this.language);
    const step: RmStep = {
      attr,
      rmType: o.rmType,
      ...(o.nodeId ? { nodeId: o.nodeId } : {}),
      name: t.name,
      ...(isOptional(attribute) ? { optional: true } : {}),
    };
    if (TRANSPARENT.has(o.rmType)) {
      return o.attributes.flatMap((a) => a.children.flatMap((c) => this.visit(c, a, aql, [...steps, step], archetypeRoot)));
    }
    // A history's only event, at most once: EHRbase folds it into the observation (`…/test_all_types:0/text`,
    // its time `…/time`, numbered when the data has a `time` too).
    if (EVENTS.has(o.rmType) && o.occurrences.max === 1 && attribute.children.filter((c) => EVENTS.has(c.rmType)).length === 1) {
      const folded = dedupe([...this.childrenOf(o, aql, archetypeRoot), ...this.contextChildren(o, aql)]);
      for (const node of folded) node.steps = [...steps, step, ...node.steps];
      return folded;
    }
    const bindings = o.bindings?.get(o.kind === 'archetype_root' ? 'at0000' : o.nodeId);
    const common = {
      id: webId(t.name),
      ...t,
      nodeId: o.nodeId,
      min: o.occurrences.min,
      max: maxOf(o.occurrences.max),
      ...(bindings ? { termBindings: bindings } : {}),
    };
    if (o.rmType === 'ELEMENT') {
      const valueAttribute = o.attributes.find((a) => a.name === 'value');
      const values = valueAttribute?.children ?? [];
      const coded = values.find((v) => v.rmType === 'DV_CODED_TEXT');
      const textAlternative = !!coded && values.some((v) => v.rmType === 'DV_TEXT');
      const value = textAlternative ? coded : values.length === 1 ? values[0] : undefined;
      if (value) {
        const inputs = inputsFor(value.rmType, value, this.language, textAlternative);
        const bounds = this.intervalBounds(value, `${aql}/value`);
        return [
          makeNode(
            {
              ...common,
              rmType: value.rmType,
              aqlPath: `${aql}/value`,
              ...(inputs ? { inputs } : {}),
              ...(value.rmType === 'DV_PROPORTION' ? { proportionTypes: proportionTypes(value) } : {}),
              ...(bounds ? { children: bounds } : {}),
            },
            // An ELEMENT whose value may be left out holds a null_flavour instead.
            [...steps, step, { attr: 'value', rmType: value.rmType, ...(valueAttribute && isOptional(valueAttribute) ? { optional: true } : {}) }],
            value,
            textAlternative,
          ),
        ];
      }
      // No value constraint, or a choice of types: the ELEMENT itself, one child per type, as EHRbase names them
      // (`quantity_value` for DV_QUANTITY) with the element's names and node id; one of them holds the value.
      const choices = values.map((v) =>
        makeNode(
          {
            id: `${v.rmType.replace(/^DV_/, '').toLowerCase()}_value`,
            ...t,
            nodeId: o.nodeId,
            rmType: v.rmType,
            min: 1,
            max: 1,
            aqlPath: `${aql}/value`,
            inputs: inputsFor(v.rmType, v, this.language, false),
          },
          [{ attr: 'value', rmType: v.rmType }],
          v,
        ),
      );
      return [makeNode({ ...common, rmType: 'ELEMENT', aqlPath: aql, ...(choices.length ? { children: choices } : {}) }, [...steps, step], o)];
    }
    const children = dedupe([...this.childrenOf(o, aql, archetypeRoot), ...this.contextChildren(o, aql)]);
    return [makeNode({ ...common, rmType: o.rmType, aqlPath: aql, ...(children.length ? { children } : {}) }, [...steps, step], o)];
  }

  /**
   * A DV_INTERVAL<T>'s `upper` and `lower`, each a T under the OPT's constraint on it. FLAT, validation and the
   * example still treat the interval as one value (flat.ts, validate.ts): these nodes name its FLAT parts.
   */
  intervalBounds(value: OptObject, aql: string): WebNode[] | undefined {
    const parameter = /^DV_INTERVAL<(\w+)>$/.exec(value.rmType)?.[1];
    if (!parameter) return undefined;
    return ['upper', 'lower'].map((end) => {
      const constraint = value.attributes.find((a) => a.name === end)?.children[0];
      const inputs = inputsFor(parameter, constraint, this.language, false);
      return makeNode(
        { id: end, name: end, localizedName: end, rmType: parameter, min: 1, max: 1, aqlPath: `${aql}/${end}`, ...(inputs ? { inputs } : {}) },
        [{ attr: end, rmType: parameter }],
        constraint,
      );
    });
  }

  /** The RM attributes EHRbase adds as context nodes after an object's own children. */
  contextChildren(o: OptObject, aql: string): WebNode[] {
    const party = inputsFor('PARTY_PROXY', undefined, this.language, false);
    const entry = [
      contextNode('language', 'CODE_PHRASE', aql),
      contextNode('encoding', 'CODE_PHRASE', aql),
      contextNode('subject', 'PARTY_PROXY', aql, 0, party),
    ];
    switch (o.rmType) {
      case 'EVENT':
      case 'POINT_EVENT':
        return [contextNode('time', 'DV_DATE_TIME', aql, 0, [{ type: 'DATETIME' }])];
      case 'INTERVAL_EVENT':
        return [
          contextNode('time', 'DV_DATE_TIME', aql, 0, [{ type: 'DATETIME' }]),
          contextNode('width', 'DV_DURATION', aql, 0, inputsFor('DV_DURATION', undefined, this.language, false)),
          contextNode('math_function', 'DV_CODED_TEXT', aql, 0, [{ suffix: 'code', type: 'TEXT' }]),
        ];
      case 'ACTION':
        return [contextNode('time', 'DV_DATE_TIME', aql, 0, [{ type: 'DATETIME' }]), ismTransitionNode(o, aql, this.language), ...entry];
      case 'INSTRUCTION':
        return [
          contextNode('narrative', 'DV_TEXT', aql, 0, [{ type: 'TEXT' }]),
          ...entry,
          // Not a context attribute in EHRbase's web template: a form field of the instruction.
          contextNode('expiry_time', 'DV_DATE_TIME', aql, 0, [{ type: 'DATETIME' }], false),
        ];
      case 'ACTIVITY': {
        // A String in the RM, required; the OPT's constraint (a pattern) is kept for validation.
        const constraint = o.attributes.find((a) => a.name === 'action_archetype_id')?.children[0];
        const actionArchetypeId = makeNode(
          {
            id: 'action_archetype_id',
            name: 'action_archetype_id',
            rmType: 'STRING',
            min: 1,
            max: 1,
            aqlPath: `${aql}/action_archetype_id`,
            inputs: [{ type: 'TEXT' }],
            inContext: true,
          },
          [{ attr: 'action_archetype_id', rmType: 'STRING' }],
          constraint,
        );
        return [contextNode('timing', 'DV_PARSABLE', aql, 0, inputsFor('DV_PARSABLE', undefined, this.language, false)), actionArchetypeId];
      }
      default:
        return ENTRIES.has(o.rmType) ? entry : [];
    }
  }
}

/** Siblings with the same id get `2`, `3`… appended, as EHRbase does. */
function dedupe(nodes: WebNode[]): WebNode[] {
  const seen = new Map<string, number>();
  for (const node of nodes) {
    const n = (seen.get(node.id) ?? 0) + 1;
    seen.set(node.id, n);
    if (n > 1) node.id = `${node.id}${n}`;
  }
  return nodes;
}

/** An ARCHETYPE_INTERNAL_REF's target: `/data[at0002]/events[at0003]/data[at0001]` from its archetype root. */
function resolveInternalRef(root: OptObject, path: string): OptObject | undefined {
  let current: OptObject | undefined = root;
  for (const segment of path.split('/').filter(Boolean)) {
    const match = /^([a-z_]+)(?:\[([^\]]+)\])?$/.exec(segment);
    if (!match || !current) return undefined;
    const attribute: OptObject['attributes'][number] | undefined = current.attributes.find((a) => a.name === match[1]);
    current = attribute?.children.find((c) => !match[2] || c.nodeId === match[2]);
  }
  return current;
}

export function buildWebTemplate(opt: OperationalTemplate): WebTemplate {
  const language = opt.language;
  const builder = new Builder(language);
  const root = opt.definition;
  const t = term(root, language);

  const contextAttribute = root.attributes.find((a) => a.name === 'context');
  const contextObject = contextAttribute?.children[0];
  const contextChildren = [
    ...(contextObject ? builder.childrenOf(contextObject, '/context', root) : []),
    contextNode('start_time', 'DV_DATE_TIME', '/context', 0, [{ type: 'DATETIME' }]),
    contextNode('setting', 'DV_CODED_TEXT', '/context', 0, [
      { suffix: 'code', type: 'TEXT' },
      { suffix: 'value', type: 'TEXT' },
    ]),
  ];
  const context = makeNode(
    { id: 'context', rmType: 'EVENT_CONTEXT', nodeId: '', min: 1, max: 1, aqlPath: '/context', children: contextChildren },
    // The web template shows context as 1..1 (as EHRbase does); the RM and most OPTs let a composition leave it out.
    [{ attr: 'context', rmType: 'EVENT_CONTEXT', ...(!contextAttribute || isOptional(contextAttribute) ? { optional: true } : {}) }],
    contextObject,
  );
  const content = root.attributes.filter((a) => a.name === 'content').flatMap((a) => a.children.flatMap((c) => builder.visit(c, a, '', [], root)));
  const category = root.attributes.find((a) => a.name === 'category')?.children[0];
  const categoryCodes = codePhrase(category)?.codes ?? ['433'];
  const categoryLabels: Record<string, string> = { '431': 'persistent', '433': 'event', '451': 'episodic' };
  const children = dedupe([
    context,
    ...content,
    // Unlike the other context nodes, EHRbase gives category no name and an empty node id.
    makeNode(
      {
        id: 'category',
        rmType: 'DV_CODED_TEXT',
        nodeId: '',
        min: 1,
        max: 1,
        aqlPath: '/category',
        inputs: [
          {
            suffix: 'code',
            type: 'CODED_TEXT',
            list: categoryCodes.map((code) => ({
              value: code,
              label: categoryLabels[code] ?? code,
              // The openEHR terminology's rubric in the template language: EHRbase knows it in English only.
              localizedLabels: { [language]: language === 'en' ? (categoryLabels[code] ?? code) : '' },
            })),
            terminology: 'openehr',
          },
        ],
        inContext: true,
      },
      [{ attr: 'category', rmType: 'DV_CODED_TEXT' }],
    ),
    contextNode('language', 'CODE_PHRASE', ''),
    contextNode('territory', 'CODE_PHRASE', ''),
    contextNode('composer', 'PARTY_PROXY', '', 0, inputsFor('PARTY_PROXY', undefined, language, false)),
  ]);
  const tree = makeNode({ id: webId(t.name), ...t, rmType: 'COMPOSITION', nodeId: root.nodeId, min: 1, max: 1, aqlPath: '', children }, [], root);
  return { templateId: opt.templateId, version: '2.3', defaultLanguage: language, languages: [language], tree };
}
