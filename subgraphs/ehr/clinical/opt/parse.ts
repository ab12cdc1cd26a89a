import { parseUntrustedXml, xmlReader } from '../../../../common/xml';
import { validationError } from '../../../../common/errors';

/**
 * An operational template (openEHR OPT 1.4 XML) read into a tree of
 * constraint objects. Only what CareGraph uses is kept: RM types, node ids,
 * occurrences and existence, term texts, and the leaf constraints of the data
 * types (code lists, quantity units and ranges, ordinals, primitive lists,
 * ranges and patterns).
 */

interface Interval {
  min: number;
  /** null: unbounded. */
  max: number | null;
}

interface Term {
  text: string;
  description?: string;
}

/** A numeric interval's bounds; a bound the interval leaves out (`upper_included` false) is marked excluded. */
export interface NumberRange {
  min?: number;
  max?: number;
  minExcluded?: true;
  maxExcluded?: true;
}

interface QuantityItem {
  unit: string;
  magnitude?: NumberRange;
  precision?: number;
}

export interface OptObject {
  kind: 'complex' | 'archetype_root' | 'slot' | 'code_phrase' | 'quantity' | 'ordinal' | 'primitive' | 'internal_ref';
  rmType: string;
  /** at-code, or the archetype id of an archetype root. */
  nodeId: string;
  occurrences: Interval;
  attributes: OptAttribute[];
  /** Term texts of the archetype this object belongs to (shared by every object of it). */
  terms: Map<string, Term>;
  /** Term bindings of that archetype: node id → terminology → bound code. */
  bindings?: Map<string, Record<string, { value: string; terminologyId: string }>>;
  /** code_phrase: terminology and allowed codes (empty: any). */
  terminology?: string;
  codes?: string[];
  /** code_phrase: the code assumed when a value leaves it out. */
  assumedCode?: string;
  /** quantity: allowed units with their ranges (empty: any). */
  quantities?: QuantityItem[];
  /** ordinal: allowed values. */
  ordinals?: Array<{ value: number; code: string; terminology: string }>;
  /** primitive (C_STRING, C_INTEGER, C_REAL, C_BOOLEAN, C_DATE_TIME, C_DATE, C_DURATION…): the constraint. */
  primitive?: { type: string; list?: string[]; pattern?: string; range?: NumberRange; trueValid?: boolean; falseValid?: boolean };
  /** internal_ref: the archetype path of the object it reuses. */
  targetPath?: string;
  /** slot: archetype id patterns it admits. */
  includes?: string[];
}

export interface OptAttribute {
  name: string;
  multiple: boolean;
  existence: Interval;
  cardinality?: Interval;
  children: OptObject[];
}

export interface OperationalTemplate {
  templateId: string;
  concept: string;
  language: string;
  uid?: string;
  definition: OptObject;
}

const ARRAYS = new Set(['attributes', 'children', 'term_definitions', 'term_bindings', 'items', 'code_list', 'list', 'includes', 'excludes', 'other_details']);

/**
 * Term texts and descriptions are read as written: EHRbase publishes a description with its line breaks and the
 * whitespace around it (the text is trimmed, as before).
 */
const parser = xmlReader(ARRAYS, ['..term_definitions.items']);

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
/** The five predefined entities and character references in raw XML text. */
const decodeXml = (raw: string) =>
  raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);/g, (_, e: string) =>
    e.startsWith('#x') ? String.fromCodePoint(parseInt(e.slice(2), 16)) : e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1))) : ENTITIES[e],
  );

type X = Record<string, any>;

const text = (v: unknown): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && '#text' in (v as X)) return String((v as X)['#text']);
  if (typeof v === 'object') return '';
  return String(v);
};

function interval(x: X | undefined, fallback: Interval): Interval {
  if (!x) return fallback;
  const lower = text(x.lower);
  const upper = text(x.upper);
  return {
    min: x.lower_unbounded === 'true' || lower === undefined || lower === '' ? 0 : Number(lower),
    max: x.upper_unbounded === 'true' || upper === undefined || upper === '' ? null : Number(upper),
  };
}

function numberRange(x: X | undefined): NumberRange | undefined {
  if (!x) return undefined;
  const range: NumberRange = {};
  if (x.lower_unbounded !== 'true' && text(x.lower)) {
    range.min = Number(text(x.lower));
    if (text(x.lower_included) === 'false') range.minExcluded = true;
  }
  if (x.upper_unbounded !== 'true' && text(x.upper)) {
    range.max = Number(text(x.upper));
    if (text(x.upper_included) === 'false') range.maxExcluded = true;
  }
  return range;
}

function termsOf(x: X): Map<string, Term> {
  const terms = new Map<string, Term>();
  for (const def of (x.term_definitions as X[] | undefined) ?? []) {
    const code = def['@code'] as string;
    const items = (def.items as X[] | undefined) ?? [];
    const find = (id: string) => {
      const raw = text(items.find((i) => i['@id'] === id));
      return raw === undefined ? undefined : decodeXml(raw);
    };
    terms.set(code, { text: find('text')?.trim() ?? code, description: find('description') });
  }
  return terms;
}

/** An archetype's term bindings (`<term_bindings terminology="SNOMED-CT"><items code="at0004"><value>` a code phrase). */
function bindingsOf(x: X): OptObject['bindings'] {
  const bindings: NonNullable<OptObject['bindings']> = new Map();
  for (const group of (x.term_bindings as X[] | undefined) ?? []) {
    for (const item of (group.items as X[] | undefined) ?? []) {
      const code = item['@code'] as string;
      const terminologyId = text(item.value?.terminology_id?.value) ?? (group['@terminology'] as string);
      const value = text(item.value?.code_string);
      if (!code || value === undefined) continue;
      bindings.set(code, { ...bindings.get(code), [terminologyId]: { value, terminologyId } });
    }
  }
  return bindings;
}

function readObject(x: X, terms: Map<string, Term>, bindings?: OptObject['bindings']): OptObject {
  const xsiType = (x['@type'] as string | undefined) ?? 'C_COMPLEX_OBJECT';
  const ownTerms = xsiType === 'C_ARCHETYPE_ROOT' ? termsOf(x) : terms;
  const ownBindings = xsiType === 'C_ARCHETYPE_ROOT' ? bindingsOf(x) : bindings;
  const base: OptObject = {
    kind: 'complex',
    rmType: text(x.rm_type_name) ?? '',
    nodeId: xsiType === 'C_ARCHETYPE_ROOT' ? (text(x.archetype_id?.value) ?? '') : (text(x.node_id) ?? ''),
    occurrences: interval(x.occurrences, { min: 1, max: 1 }),
    attributes: [],
    terms: ownTerms,
    ...(ownBindings?.size ? { bindings: ownBindings } : {}),
  };
  switch (xsiType) {
    case 'C_ARCHETYPE_ROOT':
      base.kind = 'archetype_root';
      break;
    case 'ARCHETYPE_SLOT':
      base.kind = 'slot';
      base.includes = ((x.includes as X[] | undefined) ?? []).map((i) => text(i.expression?.right_operand?.item?.pattern) ?? '').filter(Boolean);
      return base;
    case 'ARCHETYPE_INTERNAL_REF':
      base.kind = 'internal_ref';
      base.targetPath = text(x.target_path) ?? '';
      return base;
    case 'C_CODE_PHRASE':
    case 'C_CODE_REFERENCE':
      base.kind = 'code_phrase';
      // A C_CODE_REFERENCE names its terminology by a value set URI (`terminology:SNOMED-CT`).
      base.terminology = text(x.terminology_id?.value) ?? text(x.referenceSetUri)?.replace(/^terminology:/, '');
      base.codes = ((x.code_list as unknown[] | undefined) ?? []).map((c) => text(c) ?? '');
      if (text(x.assumed_value?.code_string)) base.assumedCode = text(x.assumed_value.code_string);
      return base;
    case 'C_DV_QUANTITY':
      base.kind = 'quantity';
      base.quantities = ((x.list as X[] | undefined) ?? []).map((q) => ({
        unit: text(q.units) ?? '',
        ...(q.magnitude ? { magnitude: numberRange(q.magnitude) } : {}),
        ...(text(q.precision?.lower) ? { precision: Number(text(q.precision.lower)) } : {}),
      }));
      return base;
    case 'C_DV_ORDINAL':
      base.kind = 'ordinal';
      base.ordinals = ((x.list as X[] | undefined) ?? []).map((o) => ({
        value: Number(text(o.value)),
        code: text(o.symbol?.defining_code?.code_string) ?? '',
        terminology: text(o.symbol?.defining_code?.terminology_id?.value) ?? 'local',
      }));
      return base;
    case 'C_PRIMITIVE_OBJECT': {
      base.kind = 'primitive';
      const item = (x.item ?? {}) as X;
      const type = (item['@type'] as string | undefined) ?? 'C_STRING';
      base.primitive = {
        type,
        ...(item.list ? { list: (item.list as unknown[]).map((v) => text(v) ?? '') } : {}),
        ...(text(item.pattern) ? { pattern: text(item.pattern) } : {}),
        ...(item.range ? { range: numberRange(item.range) } : {}),
        ...(type === 'C_BOOLEAN' ? { trueValid: text(item.true_valid) !== 'false', falseValid: text(item.false_valid) !== 'false' } : {}),
      };
      return base;
    }
  }
  for (const a of (x.attributes as X[] | undefined) ?? []) {
    base.attributes.push({
      name: text(a.rm_attribute_name) ?? '',
      multiple: a['@type'] === 'C_MULTIPLE_ATTRIBUTE',
      existence: interval(a.existence, { min: 0, max: 1 }),
      ...(a.cardinality ? { cardinality: interval(a.cardinality.interval, { min: 0, max: null }) } : {}),
      children: ((a.children as X[] | undefined) ?? []).map((c) => readObject(c, ownTerms, ownBindings)),
    });
  }
  return base;
}

/** OPT 1.4 XML → the template; malformed XML or a document that is no OPT → 400 with the reason. */
export function parseOpt(xml: string): OperationalTemplate {
  const doc = parseUntrustedXml(parser, xml, (reason) =>
    validationError(`The operational template is ${reason}`, [{ path: 'template', message: reason }]),
  ) as X;
  const template = doc.template as X | undefined;
  const templateId = text(template?.template_id?.value);
  if (!template || !template.definition || !templateId) {
    throw validationError('Not an operational template: expected <template> with <template_id> and <definition> (OPT 1.4)', [
      { path: 'template', message: 'not an OPT 1.4 document' },
    ]);
  }
  const definition = readObject({ ...template.definition, '@type': 'C_ARCHETYPE_ROOT' }, new Map());
  if (definition.rmType !== 'COMPOSITION')
    throw validationError('The template definition must be a COMPOSITION', [{ path: 'definition.rm_type_name', message: definition.rmType }]);
  return {
    templateId,
    concept: text(template.concept) ?? templateId,
    language: text(template.language?.code_string) ?? 'en',
    uid: text(template.uid?.value),
    definition,
  };
}
