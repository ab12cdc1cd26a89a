import { validationError } from '../../../../../common/errors';
import type { ConstraintNode } from '../../../clinical/constraints';
import { findArchetype } from '../../../clinical/archetypes';
import type { CompositionView } from '../../../compositions/composition.service';
import { clinicalTime, rmClassOf, slotInstances, valueAt, type SlotInstance } from '../../content';
import type { AqlQuery, Expr, Operand, Path } from './parser';

/**
 * Evaluates a parsed AQL query over candidate compositions the service has
 * already narrowed (tenant, access policy, EHR, templates) and decrypted:
 * content is encrypted at rest, so predicates on it cannot run in SQL.
 */
export interface TemplateInfo {
  id: string;
  name: string;
  definition: ConstraintNode;
}

export type Parameters = Record<string, unknown>;

type Row = { composition: CompositionView; template: TemplateInfo; instances: Record<string, SlotInstance> };

const TEMPLATE_ID = /^[a-z][a-z0-9_]{0,63}\.v[1-9][0-9]{0,3}$/;

export function parameterValue(operand: Operand, params: Parameters): unknown {
  if (operand.kind === 'literal') return operand.value;
  if (operand.kind === 'param') {
    if (!(operand.name in params))
      throw validationError(`AQL: parameter $${operand.name} has no value`, [{ path: `query_parameters.${operand.name}`, message: 'missing' }]);
    return params[operand.name];
  }
  throw validationError('AQL: a path is not allowed here');
}

/** Whether an archetype occurs in a constraint tree, slots of slots included. */
function usesArchetype(node: ConstraintNode, archetypeId: string, depth = 0): boolean {
  if (depth > 24) return false;
  switch (node.type) {
    case 'archetype': {
      if (node.archetypeId === archetypeId) return true;
      const archetype = findArchetype(node.archetypeId);
      return archetype ? usesArchetype(archetype.definition, archetypeId, depth + 1) : false;
    }
    case 'object':
      return Object.values(node.children).some((child) => usesArchetype(child, archetypeId, depth + 1));
    case 'list':
      return usesArchetype(node.items, archetypeId, depth + 1);
    default:
      return false;
  }
}

/** The templates a query can match, from the COMPOSITION predicate and the contained archetypes. */
export function candidateTemplates(query: AqlQuery, params: Parameters, templates: TemplateInfo[]): TemplateInfo[] {
  const [composition, ...entries] = query.contains;
  return templates.filter((t) => {
    if (composition.predicate) {
      const value = String(parameterValue(composition.predicate, params));
      if (TEMPLATE_ID.test(value) ? t.id !== value : !usesArchetype(t.definition, value)) return false;
    }
    return entries.every((e) => usesArchetype(t.definition, String(parameterValue(e.predicate!, params))));
  });
}

export function evaluate(
  query: AqlQuery,
  params: Parameters,
  compositions: CompositionView[],
  templates: Map<string, TemplateInfo>,
): { columns: Array<{ name: string; path: string }>; rows: unknown[][] } {
  const [compositionClass, ...entries] = query.contains;
  const entryIds = entries.map((e) => {
    const id = String(parameterValue(e.predicate!, params));
    if (rmClassOf(id) !== e.rmClass)
      throw validationError(`AQL: ${id} is not a ${e.rmClass} archetype`, [{ path: 'q', message: `class mismatch for ${e.variable ?? id}` }]);
    return id;
  });

  let rows: Row[] = [];
  for (const composition of compositions) {
    const template = templates.get(composition.templateId);
    if (!template || !composition.content) continue;
    const all = slotInstances(template.definition, composition.content);
    // Each contained class binds to instances inside the previous one's.
    let partial: Array<Record<string, SlotInstance>> = [{}];
    let parents: Array<SlotInstance | undefined> = [undefined];
    entries.forEach((entry, i) => {
      const nextPartial: Array<Record<string, SlotInstance>> = [];
      const nextParents: SlotInstance[] = [];
      partial.forEach((binding, j) => {
        const parent = parents[j];
        for (const instance of all) {
          if (instance.archetypeId !== entryIds[i]) continue;
          if (parent && !(instance.path.length > parent.path.length && parent.path.every((s, k) => instance.path[k] === s))) continue;
          nextPartial.push({ ...binding, [entry.variable ?? `#${i}`]: instance });
          nextParents.push(instance);
        }
      });
      partial = nextPartial;
      parents = nextParents;
    });
    rows.push(...partial.map((instances) => ({ composition, template, instances })));
  }

  const resolve = (row: Row, path: Path): unknown => resolvePath(query, compositionClass.variable, row, path);
  if (query.where) rows = rows.filter((row) => test(query.where!, row, params, resolve));
  if (query.orderBy.length > 0) {
    rows.sort((a, b) => {
      for (const order of query.orderBy) {
        const result = compareForSort(resolve(a, order.path), resolve(b, order.path));
        if (result !== 0) return order.descending ? -result : result;
      }
      return 0;
    });
  }
  if (query.offset) rows = rows.slice(query.offset);
  if (query.limit !== undefined) rows = rows.slice(0, query.limit);
  return {
    columns: query.select.map((s) => ({ name: s.alias ?? s.path.text, path: s.path.text })),
    rows: rows.map((row) => query.select.map((s) => resolve(row, s.path) ?? null)),
  };
}

function unsupportedPath(path: Path): never {
  throw validationError(`AQL: path ${path.text} is not supported`, [{ path: 'q', message: `unsupported path ${path.text}`, construct: path.text }]);
}

function resolvePath(query: AqlQuery, compositionVariable: string | undefined, row: Row, path: Path): unknown {
  const names = path.segments.map((s) => s.name);
  const joined = names.join('/');
  const c = row.composition;
  if (query.ehr?.variable && path.variable === query.ehr.variable) {
    if (joined === '') return { ehr_id: { value: c.ehrId } };
    if (joined === 'ehr_id/value') return c.ehrId;
    if (joined === 'ehr_status/subject/external_ref/id/value') return c.patientId;
    return unsupportedPath(path);
  }
  if (path.variable === compositionVariable) {
    if (joined === '') return compositionSummary(row);
    if (names[0] === 'content') {
      const [first, ...rest] = path.segments.slice(1);
      const predicate = path.segments[0].predicate;
      if (predicate) {
        const instance = slotInstances(row.template.definition, c.content).find((i) => i.archetypeId === predicate);
        return instance ? valueAt(instance.value, names.slice(1)) : undefined;
      }
      return first ? valueAt(c.content, [first.name, ...rest.map((s) => s.name)]) : c.content;
    }
    switch (joined) {
      case 'uid/value':
        return c.uid;
      case 'name/value':
        return row.template.name;
      case 'archetype_details/template_id/value':
        return c.templateId;
      case 'context/start_time/value':
        return startTime(row);
      case 'composer/name':
        return c.committer;
      default:
        return unsupportedPath(path);
    }
  }
  const instance = row.instances[path.variable];
  if (!instance) return unsupportedPath(path);
  if (joined === 'archetype_node_id') return instance.archetypeId;
  return valueAt(instance.value, names);
}

function startTime(row: Row): string {
  return clinicalTime(row.template.definition, row.composition.content) ?? row.composition.committedAt.toISOString();
}

function compositionSummary(row: Row) {
  const c = row.composition;
  return {
    _type: 'COMPOSITION',
    uid: { value: c.uid },
    name: { value: row.template.name },
    archetype_details: { template_id: { value: c.templateId } },
    context: { start_time: { value: startTime(row) } },
    content: c.content,
  };
}

const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** Numbers numerically, ISO dates and date-times in time order, other strings as text; undefined never matches. */
function compareValues(a: unknown, b: unknown): number | undefined {
  if (a === undefined || a === null || b === undefined || b === null) return undefined;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') {
    if (ISO.test(a) && ISO.test(b)) return Date.parse(a.length === 10 ? `${a}T00:00:00Z` : a) - Date.parse(b.length === 10 ? `${b}T00:00:00Z` : b);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'string' && b.trim() !== '' && !Number.isNaN(Number(b))) return a - Number(b);
  if (typeof a === 'string' && typeof b === 'number' && a.trim() !== '' && !Number.isNaN(Number(a))) return Number(a) - b;
  return undefined;
}

function compareForSort(a: unknown, b: unknown): number {
  if (a === undefined || a === null) return b === undefined || b === null ? 0 : 1;
  if (b === undefined || b === null) return -1;
  return compareValues(a, b) ?? String(a).localeCompare(String(b));
}

function test(expr: Expr, row: Row, params: Parameters, resolve: (row: Row, path: Path) => unknown): boolean {
  switch (expr.kind) {
    case 'and':
      return test(expr.left, row, params, resolve) && test(expr.right, row, params, resolve);
    case 'or':
      return test(expr.left, row, params, resolve) || test(expr.right, row, params, resolve);
    case 'not':
      return !test(expr.expr, row, params, resolve);
    case 'compare': {
      const value = (o: Operand) => (o.kind === 'path' ? resolve(row, o.path) : parameterValue(o, params));
      const result = compareValues(value(expr.left), value(expr.right));
      if (result === undefined) return false;
      switch (expr.op) {
        case '=':
          return result === 0;
        case '!=':
          return result !== 0;
        case '<':
          return result < 0;
        case '>':
          return result > 0;
        case '<=':
          return result <= 0;
        case '>=':
          return result >= 0;
      }
    }
  }
}
