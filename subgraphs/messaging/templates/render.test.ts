import { AppError } from '../../../common/errors';
import { renderTemplate, validateVariables, variablesUsed, type TemplateVariableDef } from './render';

const DEFS: TemplateVariableDef[] = [
  { name: 'date', type: 'date', required: true },
  { name: 'time', type: 'time', required: true },
  { name: 'location', type: 'string', required: false },
];
const BODY = 'On {{date}} at {{time}}{{#location}} at {{location}}{{/location}}.';

function details(given: Record<string, unknown>) {
  try {
    validateVariables(DEFS, given);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('TEMPLATE_VARIABLES_INVALID');
    return (err as AppError).details!.map((d) => d.path).sort();
  }
  throw new Error('expected a validation error');
}

describe('template variables', () => {
  it('accepts well-formed values and drops empty optional ones', () => {
    expect(validateVariables(DEFS, { date: '2026-11-23', time: '09:30', location: '' })).toEqual({ date: '2026-11-23', time: '09:30' });
  });

  it('reports every broken variable', () => {
    expect(details({})).toEqual(['variables.date', 'variables.time']);
    expect(details({ date: '2026-02-30', time: '24:00' })).toEqual(['variables.date', 'variables.time']);
    expect(details({ date: '23-11-2026', time: '9:30' })).toEqual(['variables.date', 'variables.time']);
    expect(details({ date: '2026-11-23', time: '09:30', extra: 'x' })).toEqual(['variables.extra']);
    expect(details({ date: 20261123, time: '09:30' })).toEqual(['variables.date']);
    expect(details({ date: '2026-11-23', time: '09:30', location: 'x'.repeat(501) })).toEqual(['variables.location']);
  });
});

describe('renderTemplate', () => {
  it('fills values and optional sections', () => {
    expect(renderTemplate(BODY, { date: '2026-11-23', time: '09:30', location: 'Room 2' })).toBe('On 2026-11-23 at 09:30 at Room 2.');
    expect(renderTemplate(BODY, { date: '2026-11-23', time: '09:30' })).toBe('On 2026-11-23 at 09:30.');
  });

  it('escapes for the medium and never re-interprets values', () => {
    const values = { date: '2026-11-23', time: '09:30', location: '<b>{{date}}</b>\r\nX\u0007' };
    expect(renderTemplate(BODY, values)).toBe('On 2026-11-23 at 09:30 at <b>{{date}}</b> X.');
    expect(renderTemplate(BODY, values, 'html')).toBe('On 2026-11-23 at 09:30 at &lt;b&gt;{{date}}&lt;/b&gt; X.');
  });

  it('lists the variables a text uses', () => {
    expect(variablesUsed(BODY).sort()).toEqual(['date', 'location', 'time']);
  });
});
