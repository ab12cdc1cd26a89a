import { parseOpt } from './parse';
import { buildWebTemplate, type WebNode, type WebTemplate } from './web-template';
import { canonicalToFlat, flatToCanonical } from './flat';
import { validateComposition } from './validate';
import { exampleFlat } from './example';
import { fixture, fixtureJson } from './fixtures';

const ALL_TYPES = buildWebTemplate(parseOpt(fixture('ehrbase-sdk/operationaltemplate/Test_all_types.opt')));
const ISM = buildWebTemplate(parseOpt(fixture('ehrbase-sdk/operationaltemplate/test-ism.vitagroup.de.v1.opt')));
const ACTION = '/content[openEHR-EHR-ACTION.medication.v1]';
const AT = 'test_ism_vitagroup_de_v1/medication_management/ism_transition';

function ismNodes(node: WebNode, out: WebNode[] = []): WebNode[] {
  if (node.rmType === 'ISM_TRANSITION') out.push(node);
  for (const child of node.children ?? []) ismNodes(child, out);
  return out;
}

/**
 * A published FLAT example's ism_transition entries on this template's generated composition: the rest of
 * those examples uses FLAT features CareGraph does not read (`_work_flow_id`, `_instruction_details`…).
 */
function withPublishedIsm(wt: WebTemplate, file: string, publishedRoot: string): Record<string, unknown> {
  const published = fixtureJson<Record<string, unknown>>(`ehrbase-sdk/composition/flat/simSDT/${file}`);
  const ism = Object.entries(published)
    .filter(([key]) => key.includes('/ism_transition/'))
    .map(([key, value]) => [key.replace(`${publishedRoot}/`, `${wt.tree.id}/`), value]);
  expect(ism.length).toBeGreaterThan(0);
  const own = Object.entries(exampleFlat(wt, new Date('2026-11-25T09:00:00Z'))).filter(([key]) => !key.includes('/ism_transition/'));
  return Object.fromEntries([...own, ...ism]);
}

const ismOnly = (flat: Record<string, unknown>) => Object.fromEntries(Object.entries(flat).filter(([key]) => key.includes('/ism_transition/')));

describe("an ACTION's ism_transition in the web template", () => {
  it('is the one node EHRbase publishes for Test_all_types (careflow steps with their current states)', () => {
    const nodes = ismNodes(ALL_TYPES.tree);
    expect(nodes).toHaveLength(1);
    const published = ismNodes(fixtureJson('ehrbase-sdk/webtemplate/test_all_types.json').tree);
    expect(JSON.parse(JSON.stringify(nodes[0]))).toEqual(published[0]);
  });

  it('lists every careflow step of an OPT with many, and the union of their states once each', () => {
    const [node] = ismNodes(ISM.tree);
    const [careflow, state] = node.children!;
    expect(careflow.inputs![0].list).toHaveLength(26);
    expect(careflow.inputs![0].list![0]).toMatchObject({ value: 'at0109', label: 'Medication recommended', currentStates: ['526'] });
    expect(state.inputs![0].list!.map((s) => s.value)).toEqual(['526', '245', '527', '528', '529', '530', '531', '532']);
  });
});

describe('FLAT ⇄ canonical of an ism_transition', () => {
  it.each(['ism_vaild_transition.json', 'ism_missing_transition.json'])('round-trips the published entries of %s', (file) => {
    const flat = withPublishedIsm(ISM, file, 'test-ism.vitagroup.de.v1');
    const rm = flatToCanonical(flat, ISM);
    const ism = rm.content[0].ism_transition;
    expect(ism).toMatchObject({
      _type: 'ISM_TRANSITION',
      careflow_step: { _type: 'DV_CODED_TEXT', defining_code: { terminology_id: { value: 'local' } } },
      current_state: { _type: 'DV_CODED_TEXT', defining_code: { terminology_id: { value: 'openehr' } } },
    });
    expect(ism).not.toHaveProperty('name');
    expect(ismOnly(canonicalToFlat(rm, ISM))).toEqual(ismOnly(flat));
  });

  it("round-trips Test_all_types' published entry (a current state alone)", () => {
    const flat = withPublishedIsm(ALL_TYPES, 'test_all_types.json', 'test_all_types');
    expect(ismOnly(canonicalToFlat(flatToCanonical(flat, ALL_TYPES), ALL_TYPES))).toEqual(ismOnly(flat));
  });

  it("takes a transition's terminology (openehr) from the template when FLAT omits it", () => {
    const flat = { ...withPublishedIsm(ISM, 'ism_vaild_transition.json', 'test-ism.vitagroup.de.v1') };
    delete flat[`${AT}/transition|terminology`];
    expect(flatToCanonical(flat, ISM).content[0].ism_transition.transition.defining_code.terminology_id.value).toBe('openehr');
  });
});

describe('validation of an ism_transition, as EHRbase decides the published examples', () => {
  const check = (file: string) => validateComposition(flatToCanonical(withPublishedIsm(ISM, file, 'test-ism.vitagroup.de.v1'), ISM), ISM);

  it('accepts a careflow step in a state it allows, reached by its transition', () => {
    expect(check('ism_vaild_transition.json')).toEqual([]);
  });

  it('accepts an instance without transition (EHRbase checks the step/state pair only with one)', () => {
    expect(check('ism_missing_transition.json')).toEqual([]);
  });

  it.each(['ism_invalid_current_state.json', 'ism_wrong_current_state.json'])(
    'refuses %s: the state is neither the transition target nor allowed by the step',
    (file) => {
      expect(check(file)).toEqual([
        {
          path: `${ACTION}/ism_transition/transition`,
          webTemplatePath: `${AT}/transition`,
          message: "transition '166' (cancel) leads to cancelled (528), not to the current_state '245'",
        },
        {
          path: `${ACTION}/ism_transition/current_state`,
          webTemplatePath: `${AT}/current_state`,
          message: "careflow_step 'at0109' (Medication recommended) allows the current_state '526', not '245'",
        },
      ]);
    },
  );

  it("accepts the template's generated example: its first careflow step in a state that step allows", () => {
    const example = exampleFlat(ISM, new Date('2026-11-25T09:00:00Z'));
    expect(ismOnly(example)).toMatchObject({ [`${AT}/careflow_step|code`]: 'at0109', [`${AT}/current_state|code`]: '526' });
    expect(validateComposition(flatToCanonical(example, ISM), ISM)).toEqual([]);
  });

  const base = () => flatToCanonical(withPublishedIsm(ISM, 'ism_vaild_transition.json', 'test-ism.vitagroup.de.v1'), ISM);

  it('requires exactly one ISM_TRANSITION', () => {
    const none = base();
    delete none.content[0].ism_transition;
    expect(validateComposition(none, ISM)).toEqual([{ path: `${ACTION}/ism_transition`, webTemplatePath: AT, message: 'at least 1 required, 0 present' }]);
    const two = base();
    two.content[0].ism_transition = [two.content[0].ism_transition, two.content[0].ism_transition];
    expect(validateComposition(two, ISM)).toContainEqual({ path: `${ACTION}/ism_transition`, webTemplatePath: AT, message: 'at most 1 allowed, 2 present' });
  });

  it('refuses a careflow step, current state or transition outside the lists', () => {
    const rm = base();
    const ism = rm.content[0].ism_transition;
    ism.careflow_step.defining_code.code_string = 'at9999';
    ism.current_state.defining_code.code_string = '524';
    ism.transition.defining_code.code_string = '999';
    expect(validateComposition(rm, ISM).map((e) => [e.webTemplatePath, e.message])).toEqual([
      [`${AT}/careflow_step`, expect.stringContaining("code 'at9999' is not in the template's value set")],
      [`${AT}/current_state`, expect.stringContaining("code '524' is not in the template's value set")],
      [`${AT}/transition`, expect.stringContaining("code '999' is not in the template's value set")],
    ]);
  });
});
