import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SEED_TEMPLATES } from '../subgraphs/ehr/clinical/templates';

/** The demo OPTs CareGraph ships, checked against the OPT 1.4 XML schema (vendored, see test/fixtures/openehr/README.md). */
const SCHEMA = join(__dirname, 'fixtures/openehr/ehrbase-sdk-opt-xsd/Template.xsd');
const DEMO = join(__dirname, '../subgraphs/ehr/clinical/opt/demo');

const SEEDED_OPTS = SEED_TEMPLATES.map((t) => t.id);

describe('demo operational templates against the OPT 1.4 schema', () => {
  it('covers every OPT shipped in the demo folder, and those are the seeded OPTs', () => {
    const files = readdirSync(DEMO).filter((f) => f.endsWith('.opt'));
    expect(files.map((f) => f.slice(0, -'.opt'.length)).sort()).toEqual([...SEEDED_OPTS].sort());
    expect([...SEEDED_OPTS].sort()).toEqual(['clinical_note.v1', 'encounter.v1', 'lab_result.v1', 'medication_order.v1', 'vital_signs.v1']);
  });

  it.each(SEEDED_OPTS)('%s validates', (id) => {
    const file = join(DEMO, `${id}.opt`);
    const output = execFileSync('xmllint', ['--noout', '--schema', SCHEMA, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(output).toBe('');
  });

  it('[EHR-006] refuses an OPT that breaks the schema (the check can fail)', () => {
    expect(() =>
      execFileSync('xmllint', ['--noout', '--schema', SCHEMA, '-'], {
        input: '<template xmlns="http://schemas.openehr.org/v1"><bogus/></template>',
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    ).toThrow();
  });
});
