import { parseOpt } from './parse';
import { buildWebTemplate, type WebNode } from './web-template';
import { canonicalToFlat, flatToCanonical } from './flat';
import { fixture, fixtureJson } from './fixtures';
import { exampleFlat } from './example';
import { validateComposition } from './validate';

/** An ELEMENT whose value may be one of several data types ("choice" in Test_all_types: DV_QUANTITY or DV_COUNT). */
const ALL_TYPES = buildWebTemplate(parseOpt(fixture('ehrbase-sdk/operationaltemplate/Test_all_types.opt')));
const PUBLISHED = fixtureJson<{ tree: WebNode }>('ehrbase-sdk/webtemplate/test_all_types.json');

function choiceNode(node: WebNode): WebNode | undefined {
  if (node.rmType === 'ELEMENT' && (node.children?.length ?? 0) > 1 && node.children!.every((c) => c.rmType.startsWith('DV_'))) return node;
  for (const child of node.children ?? []) {
    const found = choiceNode(child);
    if (found) return found;
  }
  return undefined;
}

describe('a choice of data types in the web template', () => {
  it('[EHR-006] is the ELEMENT EHRbase publishes: one child per type, named <type>_value, with the element’s names and node id', () => {
    const ours = choiceNode(ALL_TYPES.tree);
    const published = choiceNode(PUBLISHED.tree);
    expect(published?.children?.map((c) => c.id)).toEqual(['quantity_value', 'count_value']);
    expect(JSON.parse(JSON.stringify(ours))).toEqual(published);
  });

  it('[EHR-007] reads and writes the published FLAT entries of the choice (choice/quantity_value|magnitude, |unit)', () => {
    const published = fixtureJson<Record<string, unknown>>('ehrbase-sdk/composition/flat/simSDT/test_all_types.json');
    const choice = Object.fromEntries(Object.entries(published).filter(([key]) => key.includes('/choice/')));
    expect(Object.keys(choice)).toEqual([
      'test_all_types/test_all_types2:0/choice/quantity_value|magnitude',
      'test_all_types/test_all_types2:0/choice/quantity_value|unit',
    ]);
    const rm = flatToCanonical({ 'test_all_types/language|code': 'en', 'test_all_types/language|terminology': 'ISO_639-1', ...choice }, ALL_TYPES);
    const flat = canonicalToFlat(rm, ALL_TYPES);
    expect(Object.fromEntries(Object.entries(flat).filter(([key]) => key.includes('/choice/')))).toEqual(choice);
  });

  it('[EHR-007] holds one value in the example composition, of the first type, which the template accepts', () => {
    const flat = exampleFlat(ALL_TYPES, new Date('2026-11-25T09:00:00Z'));
    expect(Object.keys(flat).filter((key) => key.includes('/choice/'))).toEqual([
      'test_all_types/test_all_types2:0/choice/quantity_value|magnitude',
      'test_all_types/test_all_types2:0/choice/quantity_value|unit',
    ]);
    const errors = validateComposition(flatToCanonical(flat, ALL_TYPES), ALL_TYPES).filter((e) => String(e.webTemplatePath).includes('/choice'));
    expect(errors).toEqual([]);
  });
});
