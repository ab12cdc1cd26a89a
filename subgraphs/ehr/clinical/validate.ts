import type { ErrorDetail } from '../../../common/errors';
import { zodDetails } from '../../../common/errors';
import { isCalendarDate } from '../../../common/dates';
import { findArchetype } from './archetypes';
import { constraintNodeSchema, MAX_DEPTH, definitionNestsDeeperThan, type ConstraintNode } from './constraints';

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(:(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`.slice(0, 80);
}

const join = (path: string, name: string) => (path ? `${path}.${name}` : name);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Validates composition content against a template definition. Returns one
 * detail per broken path (`blood_pressure.systolic.magnitude`), empty when
 * the content conforms. Unknown elements are errors: content that the
 * template does not define would be stored but never understood.
 */
export function validateContent(definition: ConstraintNode, content: unknown, templateId: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const visit = (node: ConstraintNode, value: unknown, path: string) => {
    if (value === undefined || value === null) {
      if (node.required) details.push({ path: path || '(content)', message: 'is required' });
      return;
    }
    switch (node.type) {
      case 'archetype': {
        const archetype = findArchetype(node.archetypeId);
        if (!archetype) details.push({ path, message: `archetype ${node.archetypeId} is unknown` });
        else visit(archetype.definition, value, path);
        return;
      }
      case 'object': {
        if (!isObject(value)) {
          details.push({ path: path || '(content)', message: `must be an object, got ${describe(value)}` });
          return;
        }
        for (const [name, child] of Object.entries(node.children)) visit(child, value[name], join(path, name));
        for (const name of Object.keys(value)) {
          if (!Object.prototype.hasOwnProperty.call(node.children, name)) {
            details.push({ path: join(path, name), message: `is not defined in template ${templateId}` });
          }
        }
        return;
      }
      case 'quantity': {
        if (!isObject(value)) {
          details.push({ path, message: `must be a quantity {magnitude, unit}, got ${describe(value)}` });
          return;
        }
        const { magnitude, unit, ...rest } = value;
        for (const name of Object.keys(rest)) details.push({ path: join(path, name), message: 'is not part of a quantity (magnitude, unit)' });
        const allowed = node.units.map((u) => u.unit);
        const spec = node.units.find((u) => u.unit === unit);
        if (unit === undefined || unit === null) details.push({ path: join(path, 'unit'), message: `is required (allowed: ${allowed.join(', ')})` });
        else if (!spec) details.push({ path: join(path, 'unit'), message: `'${String(unit)}' is not allowed (allowed: ${allowed.join(', ')})` });
        if (magnitude === undefined || magnitude === null) {
          details.push({ path: join(path, 'magnitude'), message: 'is required' });
        } else if (typeof magnitude !== 'number' || !Number.isFinite(magnitude)) {
          details.push({ path: join(path, 'magnitude'), message: `must be a number, got ${describe(magnitude)}` });
        } else if (spec) {
          if (spec.min !== undefined && magnitude < spec.min)
            details.push({ path: join(path, 'magnitude'), message: `${magnitude} is below the minimum ${spec.min} ${spec.unit}` });
          if (spec.max !== undefined && magnitude > spec.max)
            details.push({ path: join(path, 'magnitude'), message: `${magnitude} is above the maximum ${spec.max} ${spec.unit}` });
        }
        return;
      }
      case 'coded_text': {
        if (!isObject(value) || typeof value.code !== 'string') {
          details.push({ path, message: `must be coded text {code, value?}, got ${describe(value)}` });
          return;
        }
        const { code, value: text, terminology, ...rest } = value;
        for (const name of Object.keys(rest)) details.push({ path: join(path, name), message: 'is not part of coded text (code, value, terminology)' });
        const entry = node.valueSet.find((e) => e.code === code);
        if (!entry) details.push({ path: join(path, 'code'), message: `'${code}' is not in the value set (${node.valueSet.map((e) => e.code).join(', ')})` });
        else if (text !== undefined && text !== entry.value) details.push({ path: join(path, 'value'), message: `must be '${entry.value}' for code ${code}` });
        if (terminology !== undefined && terminology !== node.terminology)
          details.push({ path: join(path, 'terminology'), message: `must be ${node.terminology}` });
        return;
      }
      case 'text': {
        if (typeof value !== 'string') details.push({ path, message: `must be text, got ${describe(value)}` });
        else if (node.minLength !== undefined && value.length < node.minLength)
          details.push({ path, message: `must be at least ${node.minLength} characters` });
        else if (node.maxLength !== undefined && value.length > node.maxLength) details.push({ path, message: `must be at most ${node.maxLength} characters` });
        return;
      }
      case 'date_time': {
        if (typeof value !== 'string' || !ISO_DATE_TIME.test(value) || !isCalendarDate(value.slice(0, 10)) || Number.isNaN(Date.parse(value))) {
          details.push({ path, message: 'must be an ISO 8601 date-time with a zone, e.g. 2026-11-22T09:00:00Z' });
        }
        return;
      }
      case 'date': {
        if (typeof value !== 'string' || !isCalendarDate(value)) details.push({ path, message: 'must be a calendar date YYYY-MM-DD' });
        return;
      }
      case 'boolean': {
        if (typeof value !== 'boolean') details.push({ path, message: `must be true or false, got ${describe(value)}` });
        return;
      }
      case 'count': {
        if (typeof value !== 'number' || !Number.isInteger(value)) details.push({ path, message: `must be a whole number, got ${describe(value)}` });
        else if (node.min !== undefined && value < node.min) details.push({ path, message: `${value} is below the minimum ${node.min}` });
        else if (node.max !== undefined && value > node.max) details.push({ path, message: `${value} is above the maximum ${node.max}` });
        return;
      }
      case 'list': {
        if (!Array.isArray(value)) {
          details.push({ path, message: `must be a list, got ${describe(value)}` });
          return;
        }
        const { min, max } = node.cardinality;
        if (value.length < min) details.push({ path, message: `needs at least ${min} item(s), got ${value.length}` });
        if (max !== undefined && value.length > max) details.push({ path, message: `allows at most ${max} item(s), got ${value.length}` });
        value.slice(0, max ?? value.length).forEach((item, i) => {
          if (item === null || item === undefined) details.push({ path: `${path}[${i}]`, message: 'must not be empty' });
          else visit(node.items, item, `${path}[${i}]`);
        });
        return;
      }
    }
  };
  visit(definition, content, '');
  return details.slice(0, 100);
}

/** Checks an uploaded template definition: well-formed constraints, known archetypes, bounded depth. */
export function validateDefinition(definition: unknown): { definition?: ConstraintNode; details: ErrorDetail[] } {
  if (definitionNestsDeeperThan(definition, MAX_DEPTH)) return { details: [{ path: 'definition', message: `nests deeper than ${MAX_DEPTH} levels` }] };
  const parsed = constraintNodeSchema.safeParse(definition);
  if (!parsed.success) return { details: zodDetails(parsed.error.issues).map((d) => ({ ...d, path: `definition.${d.path}`.replace(/\.\(body\)$/, '') })) };
  const details: ErrorDetail[] = [];
  if (parsed.data.type !== 'object') details.push({ path: 'definition.type', message: 'the root of a template is an object' });
  const walk = (node: ConstraintNode, path: string) => {
    if (node.type === 'archetype' && !findArchetype(node.archetypeId))
      details.push({ path: `${path}.archetypeId`, message: `unknown archetype ${node.archetypeId}` });
    if (node.type === 'object') for (const [name, child] of Object.entries(node.children)) walk(child, `${path}.children.${name}`);
    if (node.type === 'list') walk(node.items, `${path}.items`);
  };
  walk(parsed.data, 'definition');
  return details.length > 0 ? { details } : { definition: parsed.data, details };
}
