import { parseOpt } from './parse';
import { buildWebTemplate } from './web-template';
import { flatToCanonical } from './flat';
import { validateComposition } from './validate';
import { exampleFlat } from './example';
import { THIRD_PARTY, fixture, fixtureJson } from './fixtures';

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe.each(THIRD_PARTY)('validation against $templateId', (t) => {
  const wt = buildWebTemplate(parseOpt(fixture(t.opt)));

  it('accepts the published canonical and FLAT examples', () => {
    expect(validateComposition(fixtureJson(t.canonical), wt)).toEqual([]);
    expect(validateComposition(flatToCanonical(fixtureJson(t.flat), wt), wt)).toEqual([]);
  });

  it('accepts its own generated example', () => {
    const example = flatToCanonical(exampleFlat(wt, new Date('2026-11-23T09:00:00Z')), wt);
    expect(validateComposition(example, wt)).toEqual([]);
  });
});

describe('validation errors per path', () => {
  const t = THIRD_PARTY[0];
  const wt = buildWebTemplate(parseOpt(fixture(t.opt)));
  const base = fixtureJson(t.flat);
  const invalid = (change: Record<string, unknown>, drop: string[] = []) => {
    const flat = { ...clone(base), ...change };
    for (const key of drop) delete flat[key];
    return validateComposition(flatToCanonical(flat, wt), wt);
  };
  const TEMPERATURE = '/content[openEHR-EHR-OBSERVATION.body_temperature.v2]/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value';

  it('range of the unit', () => {
    expect(invalid({ 'encounter/body_temperature:0/any_event:1/temperature|magnitude': 250 })).toEqual([
      {
        path: `${TEMPERATURE}/magnitude`,
        webTemplatePath: 'encounter/body_temperature:0/any_event:1/temperature',
        message: '250 is above the maximum 100 Cel',
      },
    ]);
  });

  it('unit not allowed', () => {
    expect(invalid({ 'encounter/body_temperature:1/any_event:0/temperature|unit': 'K' })).toEqual([
      expect.objectContaining({ path: `${TEMPERATURE}/units`, webTemplatePath: 'encounter/body_temperature:1/any_event:0/temperature' }),
    ]);
  });

  it('code outside the term set', () => {
    expect(invalid({ 'encounter/body_temperature:0/location_of_measurement|code': 'at9999' })).toEqual([
      expect.objectContaining({
        webTemplatePath: 'encounter/body_temperature:0/location_of_measurement',
        message: expect.stringContaining("code 'at9999' is not in the template's value set"),
      }),
    ]);
  });

  it('missing mandatory element (occurrences)', () => {
    const errors = invalid({}, ['encounter/body_temperature:0/any_event:0/temperature|magnitude', 'encounter/body_temperature:0/any_event:0/temperature|unit']);
    expect(errors).toEqual([
      { path: TEMPERATURE, webTemplatePath: 'encounter/body_temperature:0/any_event:0/temperature', message: 'at least 1 required, 0 present' },
    ]);
  });

  it('wrong data type and content the template does not define', () => {
    const rm = flatToCanonical(clone(base), wt);
    rm.content[0].data.events[0].data.items[0].value = { _type: 'DV_COUNT', magnitude: 3 };
    rm.content.push({ _type: 'OBSERVATION', archetype_node_id: 'openEHR-EHR-OBSERVATION.pulse.v2', name: { value: 'Pulse' } });
    expect(validateComposition(rm, wt)).toEqual([
      expect.objectContaining({ path: TEMPERATURE, message: 'is DV_COUNT, the template requires DV_QUANTITY' }),
      expect.objectContaining({ path: '/content[openEHR-EHR-OBSERVATION.pulse.v2]', message: expect.stringContaining('not defined here') }),
    ]);
  });

  it('a composition of another template', () => {
    const rm = flatToCanonical(clone(base), wt);
    rm.archetype_details.template_id.value = 'other';
    expect(validateComposition(rm, wt)).toEqual([expect.objectContaining({ path: '/archetype_details/template_id' })]);
  });
});
