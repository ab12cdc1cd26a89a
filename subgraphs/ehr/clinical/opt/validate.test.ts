import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

describe('alternatives of one attribute', () => {
  // The demo lab result with its analyte's value a choice of DV_TEXT or DV_QUANTITY (as in templates where a result
  // may be written as text): the DV_TEXT alternative is added before the quantity constraint.
  const demo = readFileSync(join(__dirname, 'demo', 'lab_result.v1.opt'), 'utf8');
  const quantity = '<children xsi:type="C_DV_QUANTITY">';
  if (demo.split(quantity).length !== 2) throw new Error('the demo lab result should constrain one DV_QUANTITY');
  const text = `<children xsi:type="C_COMPLEX_OBJECT"><rm_type_name>DV_TEXT</rm_type_name><occurrences><lower_included>true</lower_included><upper_included>true</upper_included><lower_unbounded>false</lower_unbounded><upper_unbounded>false</upper_unbounded><lower>1</lower><upper>1</upper></occurrences><node_id/></children>`;
  const wt = buildWebTemplate(parseOpt(demo.replace(quantity, `${text}${quantity}`)));
  const composition = () => flatToCanonical(exampleFlat(wt, new Date('2026-11-23T09:00:00Z')), wt) as any;
  const analyteValue = (rm: any) =>
    rm.content[0].data.events[0].data.items
      .find((i: any) => i.archetype_node_id === 'openEHR-EHR-CLUSTER.laboratory_test_analyte.v1')
      .items.find((i: any) => i.archetype_node_id === 'at0001');

  it('accepts an instance that conforms to one of them', () => {
    const rm = composition();
    expect(validateComposition(rm, wt)).toEqual([]);
    analyteValue(rm).value = { _type: 'DV_TEXT', value: 'positive' };
    expect(validateComposition(rm, wt)).toEqual([]);
  });

  it('reports an instance that conforms to none', () => {
    const rm = composition();
    analyteValue(rm).value = { _type: 'DV_BOOLEAN', value: true };
    expect(validateComposition(rm, wt)).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^is DV_BOOLEAN, the template requires DV_(TEXT|QUANTITY)$/) }),
    ]);
  });
});
