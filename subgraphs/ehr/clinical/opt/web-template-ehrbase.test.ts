import { parseOpt } from './parse';
import { buildWebTemplate } from './web-template';
import { fixture, fixtureJson } from './fixtures';

/** The web templates EHRbase publishes for the vendored OPTs (test/fixtures/openehr/ehrbase-sdk), compared whole. */
const PUBLISHED = [
  { opt: 'ehrbase_multi_occurrence.de.opt', webTemplate: 'multi_occurrence.json' },
  { opt: 'AlternativeEvents.opt', webTemplate: 'AlternativeEvents.json' },
];

describe.each(PUBLISHED)('the web template of $opt', ({ opt, webTemplate }) => {
  it(`[EHR-006] is the one EHRbase publishes (${webTemplate}), node for node`, () => {
    const ours = JSON.parse(JSON.stringify(buildWebTemplate(parseOpt(fixture(`ehrbase-sdk/operationaltemplate/${opt}`)))));
    expect(ours).toEqual(fixtureJson(`ehrbase-sdk/webtemplate/${webTemplate}`));
  });
});
