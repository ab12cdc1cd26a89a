import type { OptObject } from './parse';
import { makeNode, type WebInput, type WebNode } from './web-node';

/**
 * An ACTION's `ism_transition` as the openEHR SDK and EHRbase show it in a
 * web template. The OPT constrains it with one ISM_TRANSITION alternative per
 * careflow step (each naming its step and the current states it allows); the
 * web template has one node instead, whose `careflow_step` list carries every
 * step with its `currentStates`, and whose `current_state` list is the union
 * of those states. An ISM_TRANSITION is not LOCATABLE: an instance names no
 * alternative, so it is checked through these lists.
 */

type Rm = Record<string, any>;

/** The instruction state machine's states (openEHR terminology, group "instruction states"). */
const STATES: Record<string, string> = {
  '524': 'initial',
  '526': 'planned',
  '527': 'postponed',
  '528': 'cancelled',
  '529': 'scheduled',
  '245': 'active',
  '530': 'suspended',
  '531': 'aborted',
  '532': 'completed',
  '533': 'expired',
};

/** Its transitions (group "instruction transitions"): code → the state a transition leads to. */
const TRANSITION_TARGETS: Record<string, string> = {
  '535': '526', // initiate → planned
  '536': '526', // plan step
  '537': '527', // postpone
  '538': '526', // restore
  '166': '528', // cancel
  '539': '529', // schedule
  '534': '529', // scheduled step
  '540': '245', // start
  '541': '532', // do
  '542': '527', // postponed step
  '543': '245', // active step
  '544': '530', // suspend
  '545': '530', // suspended step
  '546': '245', // resume
  '547': '531', // abort
  '548': '532', // finish
  '549': '533', // time out
  '550': '531', // notify aborted
  '551': '532', // notify completed
  '552': '528', // notify cancelled
};

/** The code list an alternative's attribute (`careflow_step`, `current_state`) allows. */
function codesOf(alternative: OptObject, attr: string): string[] {
  const value = alternative.attributes.find((a) => a.name === attr)?.children[0];
  const phrase = value?.attributes.find((a) => a.name === 'defining_code')?.children[0];
  return phrase?.codes ?? [];
}

/**
 * A code-list constraint, as the OPT parser makes them, for the generic coded-text check. Its `min` is
 * the attribute's existence in the OPT, which validation follows: the web template shows `careflow_step`
 * 1..1 (the coded text's occurrences) where the OPT makes the attribute optional, and EHRbase accepts an
 * ISM_TRANSITION without it.
 */
function codeList(terminology: string, codes: string[], terms: OptObject['terms'], min: number): OptObject {
  return { kind: 'code_phrase', rmType: 'CODE_PHRASE', nodeId: '', occurrences: { min, max: 1 }, attributes: [], terms, terminology, codes };
}

/** The least existence of an attribute over the alternatives (the RM's own when none constrains it). */
function existence(alternatives: OptObject[], attr: string, rm: number): number {
  const mins = alternatives.map((a) => a.attributes.find((x) => x.name === attr)?.existence.min ?? rm);
  return mins.length ? Math.min(...mins) : rm;
}

export function ismTransitionNode(action: OptObject, aql: string, language: string): WebNode {
  const alternatives = action.attributes.find((a) => a.name === 'ism_transition')?.children.filter((c) => c.rmType === 'ISM_TRANSITION') ?? [];
  const steps = alternatives.flatMap((alternative) =>
    codesOf(alternative, 'careflow_step').map((code) => ({ code, states: codesOf(alternative, 'current_state') })),
  );
  const states = [...new Set(steps.flatMap((s) => s.states))];
  const path = `${aql}/ism_transition`;
  const coded = (id: string, name: string, min: number, inputs: WebInput[], constraint?: OptObject) =>
    makeNode(
      { id, name, rmType: 'DV_CODED_TEXT', min, max: 1, aqlPath: `${path}/${id}`, inputs, inContext: true },
      [{ attr: id, rmType: 'DV_CODED_TEXT' }],
      constraint,
    );
  const careflowList = steps.map(({ code, states: allowed }) => {
    const t = action.terms.get(code);
    return {
      value: code,
      label: t?.text ?? code,
      ...(t ? { localizedLabels: { [language]: t.text } } : {}),
      ...(t?.description !== undefined ? { localizedDescriptions: { [language]: t.description } } : {}),
      currentStates: allowed,
    };
  });
  const stateCodes = states.length ? states : Object.keys(STATES);
  const freeText: WebInput[] = [
    { suffix: 'code', type: 'TEXT' },
    { suffix: 'value', type: 'TEXT' },
  ];
  const children = [
    steps.length
      ? coded(
          'careflow_step',
          'Careflow_step',
          1,
          [{ suffix: 'code', type: 'CODED_TEXT', list: careflowList, terminology: 'local' }],
          codeList(
            'local',
            steps.map((s) => s.code),
            action.terms,
            existence(alternatives, 'careflow_step', 0),
          ),
        )
      : coded('careflow_step', 'Careflow_step', 0, freeText),
    coded(
      'current_state',
      'Current_state',
      1,
      [
        {
          suffix: 'code',
          type: 'CODED_TEXT',
          list: stateCodes.map((code) => ({ value: code, label: STATES[code] ?? code, localizedLabels: { [language]: STATES[code] ?? code } })),
          terminology: 'openehr',
        },
      ],
      codeList('openehr', stateCodes, new Map(), existence(alternatives, 'current_state', 1)),
    ),
    coded('transition', 'transition', 0, freeText, codeList('openehr', Object.keys(TRANSITION_TARGETS), new Map(), 0)),
  ];
  return makeNode({ id: 'ism_transition', name: 'ism_transition', rmType: 'ISM_TRANSITION', min: 1, max: 1, aqlPath: path, children, inContext: true }, [
    { attr: 'ism_transition', rmType: 'ISM_TRANSITION' },
  ]);
}

/**
 * What the value lists alone do not catch, as EHRbase checks it: where a
 * transition is given, it must lead to the current state, and the careflow
 * step must allow that state. (EHRbase leaves a transition-less instance's
 * step/state pair unchecked; so does CareGraph.)
 */
export function ismTransitionErrors(node: WebNode, ism: Rm): Array<{ attribute: string; message: string }> {
  const transition = ism.transition?.defining_code?.code_string;
  const state = ism.current_state?.defining_code?.code_string;
  const step = ism.careflow_step?.defining_code?.code_string;
  if (transition === undefined || typeof state !== 'string') return [];
  const errors: Array<{ attribute: string; message: string }> = [];
  const target = TRANSITION_TARGETS[transition];
  if (target !== undefined && target !== state)
    errors.push({
      attribute: '/transition',
      message: `transition '${transition}' (${ism.transition?.value}) leads to ${STATES[target]} (${target}), not to the current_state '${state}'`,
    });
  const careflow = node.children?.find((c) => c.id === 'careflow_step')?.inputs?.[0]?.list;
  const item = careflow?.find((l) => l.value === step);
  const allowed = item?.currentStates as string[] | undefined;
  if (allowed && !allowed.includes(state))
    errors.push({
      attribute: '/current_state',
      message: `careflow_step '${step}' (${item!.label as string}) allows the current_state ${allowed.map((s) => `'${s}'`).join(', ')}, not '${state}'`,
    });
  return errors;
}
