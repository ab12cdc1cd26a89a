import type { ErrorDetail } from '../../../../common/errors';
import { ismTransitionErrors } from './ism-transition';
import { typeOf } from './rm-xml';
import type { NumberRange } from './parse';
import { isTypeAlternative, isValueNode, makeNode } from './web-node';
import { codePhrase, primitiveOf, type WebNode, type WebTemplate } from './web-template';

/**
 * A canonical COMPOSITION checked against its operational template, through
 * the template's web-template tree: occurrences of every node, RM types, the
 * constraints of the data values (units and ranges, code lists, ordinals,
 * counts, text lists, date/time syntax), and content the template does not
 * define. One error per broken path, naming the archetype path (`path`) and
 * the FLAT path of the instance (`webTemplatePath`).
 */

type Rm = Record<string, any>;

// The RM's ISO 8601 strings, in the extended (2019-01-14T10:10:10Z) or the basic (20190114T101010Z) format; partial forms reduce precision.
const EXTENDED_TIME = String.raw`\d{2}(:\d{2}(:\d{2}([.,]\d+)?)?)?`;
const BASIC_TIME = String.raw`\d{2}(\d{2}(\d{2}([.,]\d+)?)?)?`;
const ZONE = String.raw`(Z|[+-]\d{2}(:?\d{2})?)?`;
const DATE_TIME = new RegExp(String.raw`^(\d{4}-\d{2}-\d{2}T${EXTENDED_TIME}|\d{8}T${BASIC_TIME})${ZONE}$`);
const DATE = /^(\d{4}(-\d{2}(-\d{2})?)?|\d{8})$/;
const TIME = new RegExp(`^(${EXTENDED_TIME}|${BASIC_TIME})${ZONE}$`);
const DURATION = /^-?P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?(T(?!$)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$/;
/** The openEHR normal statuses of an ordered value (DV_QUANTITY.normal_status). */
const NORMAL_STATUSES = ['HHH', 'HH', 'H', 'N', 'L', 'LL', 'LLL'];
/** RM subtypes an instance may have where the template names the supertype. */
const SUBTYPES: Record<string, string[]> = {
  EVENT: ['EVENT', 'POINT_EVENT', 'INTERVAL_EVENT'],
  PARTY_PROXY: ['PARTY_SELF', 'PARTY_IDENTIFIED', 'PARTY_RELATED'],
  DV_TEXT: ['DV_TEXT', 'DV_CODED_TEXT'],
  ITEM_STRUCTURE: ['ITEM_TREE', 'ITEM_LIST', 'ITEM_SINGLE', 'ITEM_TABLE'],
};
/** The JSON type of a C_PRIMITIVE_OBJECT's value (dates, times and durations are ISO 8601 strings). */
const PRIMITIVE_JSON: Record<string, string> = { C_INTEGER: 'number', C_REAL: 'number', C_BOOLEAN: 'boolean' };
const isObject = (v: unknown): v is Rm => typeof v === 'object' && v !== null && !Array.isArray(v);
/** An attribute the OPT shows that the RM computes rather than stores (EVENT.offset): the ITS schema has no element for it. */
const isComputed = (rmType: string, attr: string) => {
  const type = typeOf(rmType);
  return !!type && !type.elements.has(attr) && !type.attributes.includes(attr);
};

class Checker {
  readonly errors: ErrorDetail[] = [];
  /** Every RM object a template node or one of its intermediate steps reached. */
  readonly reached = new Set<Rm>();

  private error(node: WebNode, webPath: string, message: string, attribute = '') {
    this.errors.push({ path: `${node.aqlPath || '/'}${attribute}`, webTemplatePath: webPath, message });
  }

  /**
   * The instances of a node below its parent's object (intermediate objects are marked as reached); how many
   * times the node occurs; whether it may be absent because an optional object on its way is.
   */
  private instances(parent: Rm, node: WebNode, siblings: WebNode[]) {
    let current: Rm[] = [parent];
    const folded = isValueNode(node) && node.steps.length > 1 && node.steps[node.steps.length - 1].attr === 'value';
    const own = folded ? node.steps.length - 2 : node.steps.length - 1;
    const named = node.name !== undefined && !isTypeAlternative(node) && siblings.some((s) => s !== node && s.aqlPath === node.aqlPath);
    const levels: Rm[][] = [];
    node.steps.forEach((step, i) => {
      current = current.flatMap((c) => {
        const v = c[step.attr];
        return (Array.isArray(v) ? v : v !== undefined && v !== null ? [v] : []).filter(
          (x: Rm) => (!step.nodeId || x?.archetype_node_id === step.nodeId) && (!named || i !== own || x?.name?.value === node.name),
        );
      });
      for (const x of current) if (isObject(x)) this.reached.add(x);
      levels.push(current);
    });
    // Occurrences are the template's only where the object holding them exists: an absent optional ITEM_TREE (state, protocol…) requires nothing.
    const firstEmpty = levels.findIndex((level) => level.length === 0);
    const optionalAbsent = firstEmpty !== -1 && firstEmpty <= own && !!node.steps[firstEmpty].optional;
    // A folded ELEMENT occurs with its value or, where the OPT lets the value be absent, with a null_flavour instead (RM: one of the two).
    const elements = folded ? levels[own] : [];
    const nullFlavoured = node.steps[node.steps.length - 1].optional ? elements.filter((e) => e.value == null && isObject(e.null_flavour)).length : 0;
    const empty = elements.filter((e) => e.value == null && e.null_flavour == null).length;
    return { found: current, occurrences: current.length + nullFlavoured, optionalAbsent, empty };
  }

  walk(node: WebNode, rm: Rm, webPath: string) {
    const children = node.children ?? [];
    const located = new Map(children.map((child) => [child, this.instances(rm, child, children)]));
    for (const child of children) {
      const { found: own, occurrences, optionalAbsent, empty } = located.get(child)!;
      const at = (alternative: WebNode, i: number) => `${webPath}/${alternative.id}${alternative.max !== 1 ? `:${i}` : ''}`;
      // An ISM_TRANSITION's parts: the OPT attribute's existence (kept on their constraint), not the web template's min.
      // One type of a choice: each alternative says 1..1, but it is the ELEMENT's one value in any of the types.
      const min =
        optionalAbsent ||
        isTypeAlternative(child) ||
        // Any step, also through a folded event (`…/events/offset`).
        child.steps.some((s, i) => isComputed(i === 0 ? ((rm._type as string | undefined) ?? node.rmType) : child.steps[i - 1].rmType, s.attr))
          ? 0
          : node.rmType === 'ISM_TRANSITION'
            ? (child.constraint?.occurrences.min ?? child.min)
            : child.min;
      if (occurrences < min) this.error(child, at(child, occurrences), `at least ${min} required, ${occurrences} present`);
      if (child.max !== -1 && occurrences > child.max) this.error(child, at(child, child.max), `at most ${child.max} allowed, ${occurrences} present`);
      if (empty) this.error(child, at(child, 0), 'an ELEMENT needs a value or a null_flavour');
      own.forEach((instance, i) => {
        // Alternatives (a choice of data types) find the same instance: it must conform to one of them.
        const alternatives = children.filter((other) => located.get(other)!.found.includes(instance));
        if (alternatives.length === 1) return this.check(child, instance, at(child, i));
        if (alternatives[0] !== child) return;
        const trials = alternatives.map((alternative) => {
          const trial = new Checker();
          trial.check(alternative, instance, at(alternative, i));
          trial.reached.forEach((x) => this.reached.add(x));
          return trial;
        });
        const best = trials.reduce((a, b) => (b.errors.length < a.errors.length ? b : a));
        this.errors.push(...best.errors);
      });
    }
  }

  private check(node: WebNode, instance: Rm, webPath: string) {
    if (node.constraint?.kind === 'primitive' || node.rmType === 'STRING') return this.primitive(node, instance, webPath);
    if (!this.typeOk(node, instance, webPath)) return;
    if (isValueNode(node)) this.value(node, instance, webPath);
    else this.walk(node, instance, webPath);
    if (node.rmType === 'ISM_TRANSITION')
      for (const e of ismTransitionErrors(node, instance)) this.error(node, `${webPath}${e.attribute}`, e.message, e.attribute);
  }

  private typeOk(node: WebNode, v: unknown, webPath: string): boolean {
    if (!isObject(v)) {
      this.error(node, webPath, `must be an object (${node.rmType})`);
      return false;
    }
    const type = v._type as string | undefined;
    if (type === undefined || node.rmType === 'CODE_PHRASE') return true;
    // Canonical JSON names a generic type without its parameter: `DV_INTERVAL` for the OPT's `DV_INTERVAL<DV_COUNT>`.
    const allowed = SUBTYPES[node.rmType] ?? [node.rmType, node.rmType.replace(/<.*>$/, '')];
    if (allowed.includes(type) || (node.textAlternative && type === 'DV_TEXT')) return true;
    this.error(node, webPath, `is ${type}, the template requires ${node.rmType}`);
    return false;
  }

  /** An RM attribute of a primitive type (ACTIVITY.action_archetype_id, a String): the JSON type and a value list. */
  private primitive(node: WebNode, v: unknown, webPath: string) {
    // Unconstrained by the OPT: the RM's String.
    const p = node.constraint?.primitive ?? { type: 'C_STRING' };
    const json = PRIMITIVE_JSON[p.type] ?? 'string';
    if (typeof v !== json) return this.error(node, webPath, `must be a ${json} (${node.rmType})`);
    // Not the pattern: action_archetype_id is itself a regex, and EHRbase writes the template's pattern as its value.
    if (p.list?.length && !p.list.includes(String(v))) this.error(node, webPath, `'${String(v)}' is not one of ${p.list.join(', ')}`);
  }

  private value(node: WebNode, v: Rm, webPath: string) {
    const c = node.constraint;
    const fail = (message: string, attribute = '') => this.error(node, webPath, message, attribute);
    const type = (v._type as string | undefined) ?? node.rmType;
    switch (type.replace(/<.*>$/, '')) {
      case 'DV_QUANTITY': {
        if (typeof v.magnitude !== 'number') return fail('magnitude must be a number', '/magnitude');
        if (typeof v.units !== 'string') return fail('units must be a string', '/units');
        if (v.normal_status !== undefined && !NORMAL_STATUSES.includes(v.normal_status?.code_string))
          fail(`normal_status must be one of ${NORMAL_STATUSES.join(', ')} (openehr_normal_statuses)`, '/normal_status');
        const items = c?.quantities ?? [];
        if (!items.length) return;
        const item = items.find((q) => q.unit === v.units);
        if (!item) return fail(`unit '${v.units}' is not allowed (allowed: ${items.map((q) => q.unit).join(', ')})`, '/units');
        outOfRange(v.magnitude, item.magnitude, ` ${v.units}`, fail);
        return;
      }
      case 'DV_CODED_TEXT': {
        const codeString = v.defining_code?.code_string;
        const terminology = v.defining_code?.terminology_id?.value;
        if (typeof codeString !== 'string' || typeof terminology !== 'string')
          return fail('defining_code needs code_string and terminology_id', '/defining_code');
        if (typeof v.value !== 'string') return fail('value must be a string', '/value');
        const phrase = codePhrase(c);
        if (!phrase?.codes?.length) return;
        if (phrase.terminology && phrase.terminology !== terminology)
          return fail(`terminology must be ${phrase.terminology}, not ${terminology}`, '/defining_code');
        if (!phrase.codes.includes(codeString)) fail(`code '${codeString}' is not in the template's value set (${phrase.codes.join(', ')})`, '/defining_code');
        return;
      }
      case 'DV_TEXT': {
        if (typeof v.value !== 'string') return fail('value must be a string', '/value');
        const list = primitiveOf(c, 'value')?.list;
        if (list?.length && !list.includes(v.value)) fail(`'${v.value}' is not one of ${list.join(', ')}`, '/value');
        return;
      }
      case 'DV_ORDINAL': {
        const ordinals = c?.ordinals ?? [];
        const codeString = v.symbol?.defining_code?.code_string;
        if (typeof v.value !== 'number') return fail('value must be a number', '/value');
        if (ordinals.length && !ordinals.some((o) => o.value === v.value && o.code === codeString))
          fail(`ordinal ${v.value} with symbol '${codeString}' is not in the template's list`, '/symbol');
        return;
      }
      case 'DV_COUNT': {
        if (!Number.isInteger(v.magnitude)) return fail('magnitude must be a whole number', '/magnitude');
        outOfRange(v.magnitude, primitiveOf(c, 'magnitude')?.range, '', fail);
        return;
      }
      case 'DV_BOOLEAN':
        if (typeof v.value !== 'boolean') fail('value must be true or false', '/value');
        return;
      case 'DV_DATE_TIME':
        if (typeof v.value !== 'string' || !DATE_TIME.test(v.value)) fail(`'${v.value}' is not an ISO 8601 date-time`, '/value');
        return;
      case 'DV_DATE':
        if (typeof v.value !== 'string' || !DATE.test(v.value)) fail(`'${v.value}' is not an ISO 8601 date`, '/value');
        return;
      case 'DV_TIME':
        if (typeof v.value !== 'string' || !TIME.test(v.value)) fail(`'${v.value}' is not an ISO 8601 time`, '/value');
        return;
      case 'DV_DURATION':
        if (typeof v.value !== 'string' || !DURATION.test(v.value)) fail(`'${v.value}' is not an ISO 8601 duration`, '/value');
        return;
      case 'DV_INTERVAL': {
        // Each bound is a value of the type parameter, under the OPT's constraint on it; an unbounded end has none.
        const parameter = /<(\w+)>$/.exec(node.rmType)?.[1];
        for (const end of ['lower', 'upper']) {
          const bound: unknown = v[end];
          if (bound === undefined || bound === null) {
            if (v[`${end}_unbounded`] !== true) fail(`${end} is required unless ${end}_unbounded`, `/${end}`);
            continue;
          }
          if (!parameter) continue;
          const constraint = c?.attributes.find((a) => a.name === end)?.children[0];
          const boundNode = makeNode({ ...node, rmType: parameter, aqlPath: `${node.aqlPath}/${end}` }, [], constraint);
          if (this.typeOk(boundNode, bound, webPath)) this.value(boundNode, bound, webPath);
        }
        return;
      }
      case 'DV_PROPORTION':
        if (typeof v.numerator !== 'number' || typeof v.denominator !== 'number') fail('numerator and denominator must be numbers');
        return;
      case 'DV_IDENTIFIER':
        if (typeof v.id !== 'string') fail('id must be a string', '/id');
        return;
      case 'DV_URI':
      case 'DV_EHR_URI':
        if (typeof v.value !== 'string') fail('value must be a URI string', '/value');
        return;
      case 'DV_PARSABLE':
        if (typeof v.value !== 'string' || typeof v.formalism !== 'string') fail('value and formalism must be strings');
        return;
      case 'DV_MULTIMEDIA':
        if (typeof v.media_type?.code_string !== 'string') fail('media_type is required', '/media_type');
        return;
      case 'CODE_PHRASE':
        if (typeof v.code_string !== 'string' || typeof v.terminology_id?.value !== 'string') fail('code_string and terminology_id are required');
        return;
      default:
        return;
    }
  }
}

/** Archetyped objects below the composition that no template node reached. */
function unknownContent(composition: Rm, reached: Set<Rm>): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  const visit = (value: unknown, path: string, depth: number) => {
    if (depth > 64) return;
    if (Array.isArray(value)) return value.forEach((v) => visit(v, path, depth + 1));
    if (!isObject(value)) return;
    if (value !== composition && typeof value.archetype_node_id === 'string' && !reached.has(value)) {
      errors.push({
        path: `${path}[${value.archetype_node_id}]`,
        message: `${value._type ?? 'object'} '${value.archetype_node_id}' is not defined here by the template`,
      });
      return;
    }
    for (const [key, child] of Object.entries(value)) {
      if (key === 'archetype_details' || key === 'name' || key === 'feeder_audit') continue;
      visit(child, `${path}${value.archetype_node_id && value !== composition ? `[${value.archetype_node_id}]` : ''}/${key}`, depth + 1);
    }
  };
  visit(composition, '', 0);
  return errors.map((e) => ({ ...e, path: e.path!.replace(/^\/\//, '/') }));
}

export function validateComposition(composition: unknown, wt: WebTemplate): ErrorDetail[] {
  if (!isObject(composition) || composition._type !== 'COMPOSITION') return [{ path: '/', message: "a canonical composition has _type 'COMPOSITION'" }];
  const errors: ErrorDetail[] = [];
  const templateId = composition.archetype_details?.template_id?.value;
  if (templateId !== wt.templateId) errors.push({ path: '/archetype_details/template_id', message: `must be '${wt.templateId}'` });
  if (composition.archetype_node_id !== wt.tree.nodeId) errors.push({ path: '/archetype_node_id', message: `must be '${wt.tree.nodeId}'` });
  if (typeof composition.name?.value !== 'string') errors.push({ path: '/name', message: 'required (DV_TEXT)' });
  for (const attr of ['language', 'territory', 'composer'])
    if (!isObject(composition[attr])) errors.push({ path: `/${attr}`, webTemplatePath: `${wt.tree.id}/${attr}`, message: 'required' });
  if (!Array.isArray(composition.content ?? [])) errors.push({ path: '/content', message: 'must be an array' });
  const checker = new Checker();
  checker.walk(wt.tree, composition, wt.tree.id);
  return [...errors, ...checker.errors, ...unknownContent(composition, checker.reached)];
}

/** A magnitude outside the template's interval (a bound the interval excludes is outside too). */
function outOfRange(magnitude: number, range: NumberRange | undefined, unit: string, fail: (message: string, attribute: string) => void) {
  if (range?.min !== undefined && (magnitude < range.min || (range.minExcluded && magnitude === range.min)))
    fail(`${magnitude} is below the ${range.minExcluded ? 'exclusive ' : ''}minimum ${range.min}${unit}`, '/magnitude');
  if (range?.max !== undefined && (magnitude > range.max || (range.maxExcluded && magnitude === range.max)))
    fail(`${magnitude} is above the ${range.maxExcluded ? 'exclusive ' : ''}maximum ${range.max}${unit}`, '/magnitude');
}
