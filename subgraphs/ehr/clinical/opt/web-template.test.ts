import { parseOpt } from './parse';
import { buildWebTemplate, webId, type WebNode } from './web-template';
import { THIRD_PARTY, fixture, fixtureJson } from './fixtures';
import { demoOpt } from '../templates';

/** What a form tool relies on, per node: path, id, type, node id, occurrences and the inputs with their coded lists. */
function skeleton(node: WebNode, out: string[] = []): string[] {
  const inputs = (node.inputs ?? []).map((i) => [i.suffix ?? '', i.type, (i.list ?? []).map((l) => l.value)]);
  out.push([node.aqlPath, node.id, node.rmType, node.nodeId ?? '', node.min, node.max, JSON.stringify(inputs)].join(' '));
  for (const child of node.children ?? []) skeleton(child, out);
  return out;
}

describe('web template from an OPT', () => {
  it.each(THIRD_PARTY)('matches the web template EHRbase publishes for $templateId', (t) => {
    const mine = JSON.parse(JSON.stringify(buildWebTemplate(parseOpt(fixture(t.opt)))));
    const published = fixtureJson(t.webTemplate);
    expect(mine.templateId).toBe(published.templateId);
    expect(skeleton(mine.tree)).toEqual(skeleton(published.tree));
  });

  it('derives ids from names the way EHRbase does', () => {
    expect(webId('*Any event(en)')).toBe('any_event_en');
    expect(webId('Körpergewicht')).toBe('körpergewicht');
  });

  it('keeps internal steps out of the JSON', () => {
    const json = JSON.stringify(buildWebTemplate(parseOpt(fixture(THIRD_PARTY[0].opt))));
    expect(json).not.toContain('"steps"');
    expect(json).not.toContain('"constraint"');
  });

  it("names a node by the template's name constraint where it renames one, else by the archetype term", () => {
    const tree = buildWebTemplate(parseOpt(demoOpt('clinical_note.v1'))).tree;
    expect(tree).toMatchObject({ id: 'clinical_note', name: 'Clinical note' });
    const context = tree.children!.find((c) => c.id === 'context')!;
    const named = context.children!.filter((c) => c.nodeId === 'at0007').map((c) => [c.id, c.name, c.rmType]);
    expect(named).toEqual([
      ['title', 'Title', 'DV_TEXT'],
      ['document_type', 'Document type', 'DV_CODED_TEXT'],
    ]);
    expect(tree.children!.find((c) => c.id === 'clinical_synopsis')?.name).toBe('Clinical synopsis');
  });
});
