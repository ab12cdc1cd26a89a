import { findArchetype } from '../../../clinical/archetypes';
import type { ConstraintNode } from '../../../clinical/constraints';
import { isChain, parameterValue, type Parameters } from './evaluate';
import type { AqlQuery, Condition, Containment, Operator, Predicate, Value } from './parser';
import type { LeafCondition } from '../../../compositions/clinical-index';

/**
 * What a query's FROM and WHERE tell the service before it reads anything,
 * so SQL narrows the candidates: the EHR it names and the templates that can
 * hold what it contains.
 */

/** Classes of the EHR itself (its status, its directory's folders): a binding of only these holds no composition. */
const EHR_LEVEL = new Set(['EHR', 'EHR_STATUS', 'FOLDER']);
const TEMPLATE_ID = /^[a-zA-Z][a-zA-Z0-9_-]*(\.[a-zA-Z0-9_-]+)*\.v\d+$/;
const ARCHETYPE_ID = /^(.+::)?[a-zA-Z][a-zA-Z0-9_]*-[a-zA-Z][a-zA-Z0-9_]*-[a-zA-Z][a-zA-Z0-9_]*\./;

function literal(value: Value, params: Parameters): unknown {
  if (value.kind === 'literal') return value.value;
  if (value.kind === 'param') return parameterValue(value, params);
  return undefined;
}

const isEhrIdPath = (parts: Array<{ name: string; predicate?: unknown }>) =>
  parts.length === 2 && parts[0].name === 'ehr_id' && parts[1].name === 'value' && !parts.some((p) => p.predicate);

/** The top-level AND terms of WHERE: each must hold for a row to be answered. */
export function andTerms(where: Condition | undefined): Condition[] {
  const terms: Condition[] = [];
  const collect = (c: Condition): void => {
    if (c.kind === 'and') {
      collect(c.left);
      collect(c.right);
    } else terms.push(c);
  };
  if (where) collect(where);
  return terms;
}

/** `<variable>/<a>/<b> = literal or parameter` among the top-level AND terms of WHERE: the value, else undefined. */
function equalityInWhere(where: Condition | undefined, variable: string | undefined, names: string[], params: Parameters): unknown {
  if (!where || !variable) return undefined;
  for (const term of andTerms(where)) {
    if (term.kind !== 'compare' || term.op !== '=') continue;
    const [path, other] = term.left.kind === 'path' ? [term.left, term.right] : [term.right, term.left];
    if (path.kind !== 'path' || path.variable !== variable || path.predicate || other.kind === 'path' || other.kind === 'call') continue;
    if (path.parts.length === names.length && path.parts.every((p, i) => p.name === names[i] && !p.predicate)) return literal(other, params);
  }
  return undefined;
}

/**
 * The EHR a query is about: `EHR e[ehr_id/value=…]` at the root of FROM, or
 * `e/ehr_id/value = …` as a top-level AND term of WHERE.
 */
export function namedEhr(from: Containment, where: Condition | undefined, params: Parameters): string | null {
  if (from.kind !== 'class' || from.rmClass !== 'EHR') return null;
  const p = from.predicate;
  if (p?.kind === 'compare' && p.op === '=' && isEhrIdPath(p.path)) return String(literal(p.value, params));
  const value = equalityInWhere(where, from.variable, ['ehr_id', 'value'], params);
  return value === undefined || value === null ? null : String(value);
}

/**
 * The template a query's WHERE pins its compositions to
 * (`c/archetype_details/template_id/value = …` as a top-level AND term, `c`
 * a COMPOSITION of FROM), or undefined.
 */
export function templateInWhere(from: Containment, where: Condition | undefined, params: Parameters): string | undefined {
  const compositions: string[] = [];
  // Only a chain without OR pins every row to that composition (another branch could match without it).
  const walk = (c: Containment): boolean => {
    if (c.kind === 'or') return false;
    if (c.kind === 'and') return walk(c.left) && walk(c.right);
    if (c.rmClass === 'COMPOSITION' && c.variable) compositions.push(c.variable);
    return !c.contains || c.contains.not || walk(c.contains.expr);
  };
  if (!walk(from) || compositions.length !== 1) return undefined;
  const value = equalityInWhere(where, compositions[0], ['archetype_details', 'template_id', 'value'], params);
  return typeof value === 'string' ? value : undefined;
}

/** Whether a template can hold what FROM asks for: archetype and template ids present, every AND branch within a composition satisfiable. */
export function templateCanMatch(from: Containment, params: Parameters, templateId: string, archetypes: Set<string>): boolean {
  const idOk = (predicate: Predicate | undefined, rmClass: string): boolean => {
    if (!predicate) return true;
    if (predicate.kind === 'and') return idOk(predicate.left, rmClass) && idOk(predicate.right, rmClass);
    if (predicate.kind === 'or') return idOk(predicate.left, rmClass) || idOk(predicate.right, rmClass);
    if (predicate.kind !== 'node') return true;
    const id = typeof predicate.id === 'string' ? predicate.id : String(parameterValue(predicate.id, params));
    if (ARCHETYPE_ID.test(id)) return archetypes.has(id);
    if (rmClass === 'COMPOSITION' && TEMPLATE_ID.test(id)) return id === templateId;
    return true;
  };
  // Below the EHR or a FOLDER (`across`), different compositions may bind different classes: the branches of an
  // AND, and a class an OR operand binds without its contents (evaluate.ts `either`); a template matters if it can
  // hold one. A branch of the EHR's own classes (EHR_STATUS, FOLDER) holds no composition, and their archetype ids
  // say nothing of a template.
  const can = (c: Containment, across: boolean, partial: boolean): boolean => {
    if (c.kind === 'and' && !across) return can(c.left, false, false) && can(c.right, false, false);
    if (c.kind === 'and') return [c.left, c.right].some((branch) => readsCompositions(branch) && can(branch, true, partial));
    if (c.kind === 'or')
      return [c.left, c.right].some((operand) => (!across || readsCompositions(operand)) && can(operand, across, across && !isChain(operand)));
    if (!EHR_LEVEL.has(c.rmClass) && !idOk(c.predicate, c.rmClass)) return false;
    return partial || !c.contains || c.contains.not || can(c.contains.expr, EHR_LEVEL.has(c.rmClass), false);
  };
  return can(from, true, false);
}

/** The archetype ids a JSON template definition uses, slots of slots included. */
export function archetypeIdsOf(node: ConstraintNode, found: Set<string>, depth = 0): void {
  if (depth > 24) return;
  switch (node.type) {
    case 'archetype': {
      if (found.has(node.archetypeId)) return;
      found.add(node.archetypeId);
      const archetype = findArchetype(node.archetypeId);
      if (archetype) archetypeIdsOf(archetype.definition, found, depth + 1);
      return;
    }
    case 'object':
      Object.values(node.children).forEach((child) => archetypeIdsOf(child, found, depth + 1));
      return;
    case 'list':
      archetypeIdsOf(node.items, found, depth + 1);
      return;
    default:
  }
}

const AT_CODE = /^at\d+(\.\d+)*$/;
const FLIPPED: Record<Operator, Operator> = { '=': '=', '!=': '!=', '<': '>', '>': '<', '<=': '>=', '>=': '<=' };

/**
 * The conditions on the clinical index a query's WHERE implies, for
 * compositions of operational templates: each top-level AND term comparing
 * a node-id path to a number (`…/value/magnitude > 140`) or a code
 * (`…/value/defining_code/code_string = 'at0006'`), below a variable bound to
 * an archetype in a FROM chain without OR, NOT or VERSION. A composition
 * without such a leaf cannot give a row, so SQL leaves it out; the query is
 * still evaluated on what remains.
 */
export function leafConditions(from: Containment, where: Condition | undefined, params: Parameters): LeafCondition[] {
  const archetypeOf = new Map<string, string>();
  const walk = (c: Containment): boolean => {
    if (c.kind === 'or') return false;
    if (c.kind === 'and') return walk(c.left) && walk(c.right);
    if (c.rmClass === 'VERSION' || c.contains?.not) return false;
    const p = c.predicate;
    if (c.variable && !EHR_LEVEL.has(c.rmClass) && p?.kind === 'node' && typeof p.id === 'string' && ARCHETYPE_ID.test(p.id) && !p.id.includes('::'))
      archetypeOf.set(c.variable, p.id);
    return !c.contains || walk(c.contains.expr);
  };
  if (!walk(from)) return [];
  const found: LeafCondition[] = [];
  for (const term of andTerms(where)) {
    if (term.kind !== 'compare') continue;
    const [path, other, op] = term.left.kind === 'path' ? [term.left, term.right, term.op] : ([term.right, term.left, FLIPPED[term.op]] as const);
    if (path.kind !== 'path' || path.predicate || other.kind === 'path' || other.kind === 'call') continue;
    const archetypeId = archetypeOf.get(path.variable);
    const value = literal(other, params);
    const names = path.parts.map((p) => p.name);
    const at = names.lastIndexOf('value');
    // Every step to the value names its node (at-codes only): the path is one of the archetype's, not a simple-form one.
    const steps = path.parts.slice(0, at);
    if (!archetypeId || at < 1 || steps.some((p) => p.predicate?.kind !== 'node' || typeof p.predicate.id !== 'string' || !AT_CODE.test(p.predicate.id)))
      continue;
    const rel = steps.map((p) => `/${p.name}[${(p.predicate as { id: string }).id}]`).join('') + '/value';
    const suffix = names.slice(at + 1).join('/');
    if (suffix === 'magnitude' && typeof value === 'number' && op !== '!=') found.push({ archetypeId, path: rel, magnitude: { op, value } });
    else if (suffix === 'defining_code/code_string' && typeof value === 'string' && op === '=') found.push({ archetypeId, path: rel, code: value });
  }
  return found;
}

/**
 * Whether every binding of FROM holds a composition: then the EHRs a query sees are those of the compositions it
 * reads. Otherwise (`FROM EHR e`, `EHR_STATUS`, `NOT CONTAINS`, an `OR` branch without one) it also sees EHRs
 * that hold none.
 */
export function requiresComposition(from: Containment): boolean {
  if (from.kind === 'and') return requiresComposition(from.left) || requiresComposition(from.right);
  if (from.kind === 'or') return requiresComposition(from.left) && requiresComposition(from.right);
  // A VERSION holds a composition or, where the query reads statuses, an EHR_STATUS: it needs one when what it contains does.
  if (from.rmClass === 'VERSION') return !from.contains || from.contains.not || requiresComposition(from.contains.expr);
  if (!EHR_LEVEL.has(from.rmClass)) return true;
  return from.contains !== undefined && !from.contains.not && requiresComposition(from.contains.expr);
}

/** Whether FROM names a VERSION of every version (`[ALL_VERSIONS]`) or of some chosen by a predicate: earlier versions are read too. */
export function asksEveryVersion(from: Containment): boolean {
  if (from.kind !== 'class') return asksEveryVersion(from.left) || asksEveryVersion(from.right);
  if (from.rmClass === 'VERSION' && from.version !== undefined && from.version.kind !== 'latest') return true;
  return from.contains !== undefined && asksEveryVersion(from.contains.expr);
}

/** Whether FROM names a class below the EHR level anywhere: if not, no composition can change the answer. */
export function readsCompositions(from: Containment): boolean {
  if (from.kind !== 'class') return readsCompositions(from.left) || readsCompositions(from.right);
  if (from.rmClass === 'VERSION' && from.contains && !from.contains.not) return readsCompositions(from.contains.expr);
  return !EHR_LEVEL.has(from.rmClass) || (from.contains !== undefined && readsCompositions(from.contains.expr));
}

/** Whether every binding of FROM holds a FOLDER: then only EHRs with a directory can answer. */
export function requiresFolder(from: Containment): boolean {
  if (from.kind === 'and') return requiresFolder(from.left) || requiresFolder(from.right);
  if (from.kind === 'or') return requiresFolder(from.left) && requiresFolder(from.right);
  if (from.rmClass === 'FOLDER') return true;
  return from.contains !== undefined && !from.contains.not && requiresFolder(from.contains.expr);
}

/**
 * Whether every class of FROM that reads compositions is contained in a FOLDER (`FOLDER f CONTAINS COMPOSITION c`):
 * then only compositions filed in a directory can answer.
 */
export function readsFiledCompositionsOnly(from: Containment): boolean {
  const visit = (c: Containment, filed: boolean): boolean => {
    if (c.kind !== 'class') return visit(c.left, filed) && visit(c.right, filed);
    if (!filed && !EHR_LEVEL.has(c.rmClass) && c.rmClass !== 'VERSION') return false;
    return !c.contains || visit(c.contains.expr, filed || c.rmClass === 'FOLDER');
  };
  return visit(from, false);
}

/** Whether FROM names a FOLDER: only then are the EHRs' directories read. */
export function readsFolders(from: Containment): boolean {
  if (from.kind !== 'class') return readsFolders(from.left) || readsFolders(from.right);
  return from.rmClass === 'FOLDER' || (from.contains !== undefined && readsFolders(from.contains.expr));
}

/**
 * Whether a query can see an EHR_STATUS: it names the class or an `ehr_status` path, or selects an EHR whole.
 * Otherwise the statuses as written (decrypted per EHR) are not loaded.
 */
export function readsEhrStatus(query: AqlQuery, text: string): boolean {
  if (/ehr_status/i.test(text)) return true;
  const ehrVariables = new Set<string>();
  const visit = (c: Containment): void => {
    if (c.kind !== 'class') {
      visit(c.left);
      visit(c.right);
      return;
    }
    if (c.rmClass === 'EHR' && c.variable) ehrVariables.add(c.variable);
    if (c.contains) visit(c.contains.expr);
  };
  visit(query.from);
  return query.select.some(({ expr }) => expr.kind === 'path' && expr.parts.length === 0 && ehrVariables.has(expr.variable));
}
