import type { Flat } from './flat';
import type { WebInput, WebNode, WebTemplate } from './web-template';
import { isTypeAlternative } from './web-node';

/**
 * An example composition of a template (the openEHR `/example` resource), as
 * FLAT: every node once, each value the first the template allows (first unit
 * at its lower bound, first code, first ordinal), times from `now`.
 */

const inputOf = (node: WebNode, suffix?: string): WebInput | undefined => node.inputs?.find((i) => i.suffix === suffix);
type Bound = { minOp?: string; min?: number; maxOp?: string; max?: number };

/** The lowest value the range allows: its lower bound, or (when the range leaves it out) one above, below the upper. */
function lowest(range: Bound | undefined): number {
  if (range?.min !== undefined) {
    if (range.minOp !== '>') return range.min;
    return range.max !== undefined && range.max - range.min <= 1 ? (range.min + range.max) / 2 : range.min + 1;
  }
  if (range?.max !== undefined) return range.maxOp === '<' && range.max <= 0 ? range.max - 1 : Math.min(0, range.max);
  return 0;
}

function values(node: WebNode, path: string, id: string, language: string, now: Date, out: Flat) {
  const iso = now.toISOString();
  switch (node.rmType) {
    case 'DV_QUANTITY': {
      const unit = inputOf(node, 'unit')?.list?.[0];
      const range = ((unit?.validation as { range?: Bound } | undefined)?.range ?? inputOf(node, 'magnitude')?.validation?.range) as Bound | undefined;
      out[`${path}|magnitude`] = lowest(range);
      out[`${path}|unit`] = unit?.value ?? '1';
      return;
    }
    case 'DV_CODED_TEXT': {
      const input = inputOf(node, 'code');
      const first = input?.list?.[0];
      if (id === 'setting') {
        Object.assign(out, { [`${path}|code`]: '238', [`${path}|value`]: 'other care', [`${path}|terminology`]: 'openehr' });
      } else if (first) {
        Object.assign(out, { [`${path}|code`]: first.value, [`${path}|value`]: first.label, [`${path}|terminology`]: input?.terminology ?? 'local' });
      } else if (node.textAlternative || !input) {
        out[`${path}|other`] = 'Lorem ipsum';
      } else {
        Object.assign(out, { [`${path}|code`]: '42', [`${path}|value`]: 'Lorem ipsum', [`${path}|terminology`]: input.terminology ?? 'local' });
      }
      return;
    }
    case 'DV_TEXT':
      out[path] = node.inputs?.[0]?.list?.[0]?.value ?? 'Lorem ipsum';
      return;
    case 'DV_ORDINAL': {
      const first = node.inputs?.[0]?.list?.[0];
      if (first) Object.assign(out, { [`${path}|code`]: first.value, [`${path}|value`]: first.label, [`${path}|ordinal`]: first.ordinal });
      return;
    }
    case 'DV_COUNT':
      out[path] = lowest(node.inputs?.[0]?.validation?.range as Bound | undefined);
      return;
    case 'DV_BOOLEAN':
      out[path] = true;
      return;
    case 'DV_DATE_TIME':
      out[path] = iso;
      return;
    case 'DV_DATE':
      out[path] = iso.slice(0, 10);
      return;
    case 'DV_TIME':
      out[path] = iso.slice(11, 19);
      return;
    case 'DV_DURATION':
      out[path] = 'P1D';
      return;
    case 'DV_PROPORTION':
      Object.assign(out, { [`${path}|numerator`]: 1, [`${path}|denominator`]: 100, [`${path}|type`]: 2 });
      return;
    case 'DV_IDENTIFIER':
      Object.assign(out, { [`${path}|id`]: 'ID-1', [`${path}|type`]: 'LOCAL', [`${path}|issuer`]: 'Example', [`${path}|assigner`]: 'Example' });
      return;
    case 'DV_URI':
    case 'DV_EHR_URI':
      out[path] = 'https://example.org/';
      return;
    case 'DV_PARSABLE':
      Object.assign(out, { [`${path}|value`]: 'Lorem ipsum', [`${path}|formalism`]: 'text/plain' });
      return;
    case 'DV_MULTIMEDIA':
      Object.assign(out, { [path]: 'https://example.org/file.txt', [`${path}|mediatype`]: 'text/plain', [`${path}|size`]: 0 });
      return;
    case 'CODE_PHRASE': {
      const phrases: Record<string, [string, string]> = {
        language: [language, 'ISO_639-1'],
        territory: ['NL', 'ISO_3166-1'],
        encoding: ['UTF-8', 'IANA_character-sets'],
      };
      const [code, terminology] = phrases[id] ?? ['en', 'ISO_639-1'];
      Object.assign(out, { [`${path}|code`]: code, [`${path}|terminology`]: terminology });
      return;
    }
    case 'PARTY_PROXY':
      if (id === 'composer') out[`${path}|name`] = 'Example Clinician';
      return;
    case 'STRING':
      // ACTIVITY.action_archetype_id: the template's pattern, as EHRbase writes it, else any ACTION archetype.
      out[path] = node.constraint?.primitive?.pattern ?? '/.*/';
      return;
    default:
      return;
  }
}

/** The first careflow step in the first state it allows; no transition (optional). */
function ismExample(node: WebNode, path: string, out: Flat) {
  const step = node.children?.find((c) => c.id === 'careflow_step')?.inputs?.[0]?.list?.[0];
  const state = node.children
    ?.find((c) => c.id === 'current_state')
    ?.inputs?.[0]?.list?.find((s) => !step || (step.currentStates as string[]).includes(s.value as string));
  if (step)
    Object.assign(out, {
      [`${path}/careflow_step|code`]: step.value,
      [`${path}/careflow_step|value`]: step.label,
      [`${path}/careflow_step|terminology`]: 'local',
    });
  if (state)
    Object.assign(out, {
      [`${path}/current_state|code`]: state.value,
      [`${path}/current_state|value`]: state.label,
      [`${path}/current_state|terminology`]: 'openehr',
    });
}

export function exampleFlat(wt: WebTemplate, now: Date): Flat {
  const out: Flat = {};
  const walk = (node: WebNode, path: string) => {
    const children = node.children ?? [];
    for (const child of children) {
      // A choice of data types holds one value: the first type's.
      if (isTypeAlternative(child) && children.find(isTypeAlternative) !== child) continue;
      const at = `${path}/${child.id}${child.max !== 1 ? ':0' : ''}`;
      if (child.rmType === 'ISM_TRANSITION') ismExample(child, at, out);
      else if (child.children) walk(child, at);
      else values(child, at, child.id, wt.defaultLanguage, now, out);
    }
  };
  walk(wt.tree, wt.tree.id);
  return out;
}
