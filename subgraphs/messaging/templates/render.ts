import { AppError, type ErrorDetail } from '../../../common/errors';
import { isCalendarDate } from '../../../common/dates';

export type VariableType = 'string' | 'date' | 'time';
export const VARIABLE_TYPES: VariableType[] = ['string', 'date', 'time'];

export interface TemplateVariableDef {
  name: string;
  type: VariableType;
  required: boolean;
}

const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
const MAX_STRING = 500;

export function isClockTime(value: string): boolean {
  return TIME.test(value);
}

/**
 * docs/api.md §5: every required variable given, none unknown, string values
 * only, dates YYYY-MM-DD (a real calendar day), times HH:MM (24 h). Throws
 * TEMPLATE_VARIABLES_INVALID with one detail per broken variable.
 */
export function validateVariables(defs: TemplateVariableDef[], given: Record<string, unknown>): Record<string, string> {
  const details: ErrorDetail[] = [];
  const known = new Map(defs.map((def) => [def.name, def]));
  for (const name of Object.keys(given)) {
    if (!known.has(name)) details.push({ path: `variables.${name}`, message: `'${name}' is not a variable of this template` });
  }
  const values: Record<string, string> = {};
  for (const def of defs) {
    const value = given[def.name];
    const path = `variables.${def.name}`;
    if (value === undefined || value === null || value === '') {
      if (def.required) details.push({ path, message: `'${def.name}' is required` });
      continue;
    }
    if (typeof value !== 'string') {
      details.push({ path, message: `'${def.name}' must be a string` });
      continue;
    }
    if (def.type === 'date' && !isCalendarDate(value)) details.push({ path, message: `'${def.name}' must be a date as YYYY-MM-DD` });
    else if (def.type === 'time' && !isClockTime(value)) details.push({ path, message: `'${def.name}' must be a time as HH:MM (24 h)` });
    else if (value.length > MAX_STRING) details.push({ path, message: `'${def.name}' is longer than ${MAX_STRING} characters` });
    else values[def.name] = value;
  }
  if (details.length > 0) throw new AppError('TEMPLATE_VARIABLES_INVALID', 'The template variables are missing or malformed', details);
  return values;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * How a value is made safe for its medium: control characters never reach a
 * handset or a mail header; HTML-special characters are escaped in HTML.
 */
export function escapeValue(value: string, mode: 'text' | 'html'): string {
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, '').replace(/[\r\n]+/g, ' ');
  return mode === 'html' ? clean.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]) : clean;
}

const SECTION = /\{\{#\s*([A-Za-z_][\w]*)\s*\}\}([\s\S]*?)\{\{\/\s*\1\s*\}\}/g;
const PLACEHOLDER = /\{\{\s*([A-Za-z_][\w]*)\s*\}\}/g;

/**
 * A small mustache subset: `{{name}}` inserts a value, `{{#name}}…{{/name}}`
 * keeps its content only when the value is given. Values are escaped for the
 * medium and never re-interpreted, so a value containing `{{x}}` stays literal.
 */
export function renderTemplate(text: string, values: Record<string, string>, mode: 'text' | 'html' = 'text'): string {
  const withSections = text.replace(SECTION, (_all, name: string, inner: string) => (values[name] ? inner : ''));
  return withSections.replace(PLACEHOLDER, (_all, name: string) => (values[name] !== undefined ? escapeValue(values[name], mode) : ''));
}

/** The variable names a template text uses (to check a new template against its declared variables). */
export function variablesUsed(text: string): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(SECTION)) names.add(match[1]);
  for (const match of text.matchAll(PLACEHOLDER)) names.add(match[1]);
  return [...names];
}
