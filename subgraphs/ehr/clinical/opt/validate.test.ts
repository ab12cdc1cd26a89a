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
        message: '250 is above the exclusive maximum 100 Cel',
      },
    ]);
  });

  it('[EHR-003] a bound the unit range excludes (0 ≤ Cel < 100): 100 is out, 99.9 in', () => {
    expect(invalid({ 'encounter/body_temperature:0/any_event:1/temperature|magnitude': 100 })).toEqual([
      expect.objectContaining({ message: '100 is above the exclusive maximum 100 Cel' }),
    ]);
    expect(invalid({ 'encounter/body_temperature:0/any_event:1/temperature|magnitude': 99.9 })).toEqual([]);
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

describe("EHRbase's AQL conformance compositions (integration-tests)", () => {
  const IT = 'ehrbase-integration-tests';
  const load = (opt: string, composition: string) => ({
    wt: buildWebTemplate(parseOpt(fixture(`${IT}/opts/${opt}`))),
    rm: fixtureJson(`${IT}/compositions/${composition}`),
  });
  const find = (items: any[], nodeId: string) => items.find((i) => i.archetype_node_id === nodeId);

  it('ACTIVITY.action_archetype_id is a JSON string (a String in the RM), not an object', () => {
    const { wt, rm } = load('external/minimal_instruction.opt', 'external/minimal_instruction.json');
    expect(validateComposition(rm, wt)).toEqual([]);
    rm.content[0].activities[0].action_archetype_id = { value: 'openEHR-EHR-ACTION\\.minimal\\.v1' };
    expect(validateComposition(rm, wt)).toEqual([
      expect.objectContaining({
        path: '/content[openEHR-EHR-INSTRUCTION.minimal.v1]/activities[at0001]/action_archetype_id',
        message: 'must be a string (STRING)',
      }),
    ]);
  });

  it('a persistent composition without context, which its OPT does not constrain (optional in the RM)', () => {
    const { wt, rm } = load('persistent_minimal.opt', 'persistent_minimal.en.v1__full.json');
    expect(rm.context).toBeUndefined();
    expect(validateComposition(rm, wt)).toEqual([]);
  });

  it('EVENT.offset (computed by the RM) and an optional state left out; a required element of a present state still required', () => {
    const { wt, rm } = load('ehrbase_blood_pressure_simple.de.v0.opt', 'ehrbase_blood_pressure_simple.de.v0.json');
    const event = rm.content[0].data.events[0];
    expect(event.offset).toBeUndefined();
    expect(validateComposition(rm, wt)).toEqual([]);
    event.state = { _type: 'ITEM_TREE', archetype_node_id: 'at0007', name: { _type: 'DV_TEXT', value: 'state structure' }, items: [] };
    expect(validateComposition(rm, wt)).toEqual([
      expect.objectContaining({
        path: '/content[openEHR-EHR-OBSERVATION.sample_blood_pressure.v1]/data[at0001]/events[at0002]/state[at0007]/items[at0008]/value',
        message: 'at least 1 required, 0 present',
      }),
    ]);
  });

  describe('all types (the OPT as the openEHR SDK publishes it)', () => {
    const wt = buildWebTemplate(parseOpt(fixture('ehrbase-sdk/operationaltemplate/Test_all_types.opt')));
    const composition = () => fixtureJson(`${IT}/compositions/external/all_types_systematic_tests.json`);
    const entry = (rm: any, id: string) => rm.content.find((c: any) => c.archetype_node_id === id);
    const observationItems = (rm: any) => entry(rm, 'openEHR-EHR-OBSERVATION.test_all_types.v1').data.events[0].data.items;
    const intervals = (rm: any) => entry(rm, 'openEHR-EHR-EVALUATION.test_all_types.v1').data.items;
    const adminItem = (rm: any) =>
      find(entry(rm, 'openEHR-EHR-SECTION.test_all_types.v1').items[0].items, 'openEHR-EHR-ADMIN_ENTRY.test_all_types.v1').data.item;
    const URI = '/content[openEHR-EHR-EVALUATION.test_all_types.v1]/data[at0001]/items[at0002]/value';

    it('accepts all but the DV_TEXT it holds where the template requires a DV_URI (not a DV_TEXT subtype in the RM)', () => {
      expect(validateComposition(composition(), wt)).toEqual([expect.objectContaining({ path: URI, message: 'is DV_TEXT, the template requires DV_URI' })]);
    });

    const withUri = () => {
      const rm = composition();
      find(intervals(rm), 'at0002').value = { _type: 'DV_URI', value: 'https://www.iana.org' };
      return rm;
    };

    it('ISO 8601 dates, times and date-times in the basic and the extended format', () => {
      const rm = withUri();
      const items = observationItems(rm);
      const set = (nodeId: string, value: string) => (find(items, nodeId).value.value = value);
      for (const [date, dateTime, time] of [
        ['20190114', '20190114T101010Z', '101010'],
        ['2019-01', '20190114T1010+0100', '101010.5'],
        ['2019', '2019-01-14T10:10:10.5+01:00', '10:10:10Z'],
      ]) {
        set('at0009', date);
        set('at0010', dateTime);
        set('at0012', time);
        expect(validateComposition(rm, wt)).toEqual([]);
      }
      set('at0009', '2019-0114');
      set('at0010', '20190114T10:10:10');
      set('at0012', '10:1010');
      expect(validateComposition(rm, wt).map((e) => e.message)).toEqual([
        "'2019-0114' is not an ISO 8601 date",
        "'20190114T10:10:10' is not an ISO 8601 date-time",
        "'10:1010' is not an ISO 8601 time",
      ]);
    });

    it('DV_INTERVAL for the OPT’s DV_INTERVAL<T>, its bounds checked as T', () => {
      const rm = withUri();
      expect(validateComposition(rm, wt)).toEqual([]);
      const count = find(intervals(rm), 'at0003').value;
      count.lower = { _type: 'DV_QUANTITY', magnitude: 1, units: 'mm' };
      delete count.upper;
      find(intervals(rm), 'at0005').value.upper.value = '28.01.2019';
      const at = (nodeId: string) => `/content[openEHR-EHR-EVALUATION.test_all_types.v1]/data[at0001]/items[${nodeId}]/value`;
      expect(validateComposition(rm, wt)).toEqual([
        expect.objectContaining({ path: `${at('at0003')}/lower`, message: 'is DV_QUANTITY, the template requires DV_COUNT' }),
        expect.objectContaining({ path: `${at('at0003')}/upper`, message: 'upper is required unless upper_unbounded' }),
        expect.objectContaining({ path: `${at('at0005')}/upper/value`, message: "'28.01.2019' is not an ISO 8601 date-time" }),
      ]);
      count.upper_unbounded = true;
      count.lower = { _type: 'DV_COUNT', magnitude: 1 };
      find(intervals(rm), 'at0005').value.upper.value = '20190128T2122';
      expect(validateComposition(rm, wt)).toEqual([]);
    });

    it('an optional other_context left out; present, its mandatory element is required', () => {
      const rm = withUri();
      expect(rm.context.other_context).toBeUndefined();
      rm.context.other_context = { _type: 'ITEM_SINGLE', archetype_node_id: 'at0004', name: { _type: 'DV_TEXT', value: 'Tree' } };
      expect(validateComposition(rm, wt)).toEqual([
        expect.objectContaining({ path: '/context/other_context[at0004]/item[at0005]/value', message: 'at least 1 required, 0 present' }),
      ]);
    });

    it('a mandatory ELEMENT with a null_flavour instead of its value; with neither it is refused', () => {
      const rm = withUri();
      const item = adminItem(rm);
      delete item.value;
      item.null_flavour = {
        _type: 'DV_CODED_TEXT',
        value: 'unknown',
        defining_code: { _type: 'CODE_PHRASE', terminology_id: { _type: 'TERMINOLOGY_ID', value: 'openehr' }, code_string: '253' },
      };
      expect(validateComposition(rm, wt)).toEqual([]);
      delete item.null_flavour;
      expect(validateComposition(rm, wt).map((e) => e.message)).toEqual(['at least 1 required, 0 present', 'an ELEMENT needs a value or a null_flavour']);
    });
  });
});
