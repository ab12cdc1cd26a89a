import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The vendored third-party openEHR artefacts (test/fixtures/openehr): OPT, published web template, FLAT and canonical examples. */
const ROOT = join(__dirname, '../../../../test/fixtures/openehr');

export const THIRD_PARTY = [
  {
    templateId: 'ehrbase_multi_occurrence.de.v1',
    opt: 'ehrbase-sdk/operationaltemplate/ehrbase_multi_occurrence.de.opt',
    webTemplate: 'ehrbase-sdk/webtemplate/multi_occurrence.json',
    flat: 'ehrbase-sdk/composition/flat/simSDT/multi_occurrence.json',
    canonical: 'ehrbase-sdk/composition/canonical_json/multi_occurrence.json',
    /** The published FLAT and canonical examples are the same composition. */
    samePair: true,
  },
  {
    templateId: 'AlternativeEvents',
    opt: 'ehrbase-sdk/operationaltemplate/AlternativeEvents.opt',
    webTemplate: 'ehrbase-sdk/webtemplate/AlternativeEvents.json',
    flat: 'ehrbase-sdk/composition/flat/simSDT/AlternativeEvents.json',
    canonical: 'ehrbase-sdk/composition/canonical_json/alternative_events.json',
    /** The canonical example holds the first three of the FLAT example's five events. */
    samePair: false,
  },
] as const;

export const fixture = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
export const fixtureJson = <T = any>(path: string): T => JSON.parse(fixture(path)) as T;
