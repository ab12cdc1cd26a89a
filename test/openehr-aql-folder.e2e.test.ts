import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { openEhrCalls } from './support/openehr-oas';
import { compositionDecrypts } from './support/clinical-load';

/**
 * AQL over EHR directories (`FROM FOLDER`), checked against EHRbase's FOLDER conformance suites: their folder
 * trees and expected result sets, kept unmodified under test/fixtures/openehr/ehrbase-integration-tests (see its
 * README). Each suite below is one of theirs: the same directories, compositions, queries and comparison (rows in
 * order, or in any order where theirs ignores it). Where CareGraph differs by a documented decision, the expected
 * file is read through it: a directory's root uid is the version uid CareGraph gives it (docs/exchange.md,
 * "DIRECTORY"), and a folder item must name a composition of its EHR, so the fixed item ids of
 * `folder_details.json` stand for two compositions committed first.
 */
const FIXTURES = join(__dirname, 'fixtures/openehr/ehrbase-integration-tests');
const fixture = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');

interface Case {
  q: string;
  expected: string;
  anyOrder?: boolean;
  /** Columns EHRbase's suite leaves out of the comparison (commit times); here they must be ISO times. */
  times?: number[];
}
interface Suite {
  name: string;
  /** Per EHR: its directory file, the compositions filed in it (suite variables c_uidN, and b for the second EHR), and those committed after it. */
  ehrs: Array<{ folder: string; compositions?: number; after?: number }>;
  cases: Case[];
}

const FOLDER_HIERARCHY_QUERIES: Case[] = [
  { q: 'SELECT f/uid/value, f/name/value, f/archetype_node_id FROM FOLDER f', expected: 'expected_find_all.json', anyOrder: true },
  { q: 'SELECT f/uid/value FROM FOLDER f[openEHR-EHR-FOLDER.episode_of_care.v1]', expected: 'expected_find_by_archetype.json' },
  ...['root1', 'subfolder1', 'subsubfolder1'].map((name) => ({
    q: `SELECT f/uid/value FROM FOLDER f WHERE f/name/value = '${name}'`,
    expected: `expected_find_by_name_${name}.json`,
  })),
  {
    q: "SELECT f/name/value, f/uid/value FROM FOLDER f WHERE f/uid/value = '0cc504b1-4d6d-4cd5-81d9-0ef1b870edb3'",
    expected: 'expected_find_by_folder_id.json',
  },
];
const NAMES = ['root1', 'subfolder1', 'subsubfolder1', 'subsubfolder2', 'subsubsubfolder2'];

const SUITES: Suite[] = [
  { name: 'FROM_FOLDER/find_all_and_by', ehrs: [{ folder: 'folder_simple_hierarchy.json' }], cases: FOLDER_HIERARCHY_QUERIES },
  {
    name: 'FROM_FOLDER/find_by_ehr_id',
    ehrs: [{ folder: 'folder_simple_hierarchy.json' }, { folder: 'folder_simple.json' }],
    cases: [
      {
        q: "SELECT e/ehr_id/value, f/uid/value FROM EHR e CONTAINS FOLDER f WHERE e/ehr_id/value = '${ehr_id1}'",
        expected: 'expected_folder_find_by_ehr_id.json',
      },
    ],
  },
  {
    name: 'FROM_FOLDER_CONTAINS_COMPO/folder_in_folder',
    ehrs: [{ folder: 'folder_with_compositions.json', compositions: 4 }],
    cases: [
      {
        q: 'SELECT c/uid/value FROM FOLDER f1[openEHR-EHR-FOLDER.episode_of_care.v1] CONTAINS FOLDER f2[openEHR-EHR-FOLDER.episode_of_care.v1] CONTAINS COMPOSITION c',
        expected: 'expected_contains_compo_folder_in_folder.json',
      },
    ],
  },
  {
    name: 'FROM_FOLDER_CONTAINS_COMPO/multi_comp_in_a_folder',
    ehrs: [{ folder: 'folder_multi_compositions.json', compositions: 2, after: 1 }],
    cases: [{ q: 'SELECT c/uid/value FROM FOLDER f CONTAINS COMPOSITION c', expected: 'expected_contains_compo_multi_compo_in_folder.json', anyOrder: true }],
  },
  {
    name: 'FROM_FOLDER_CONTAINS_COMPO/multiple_ehrs_and_compo_select_by_ids, over_multiple_ehrs',
    ehrs: [
      { folder: 'folder_with_compositions.json', compositions: 4, after: 1 },
      { folder: 'folder_with_compositions1.json', compositions: 4, after: 1 },
    ],
    cases: [
      {
        // The suite compares c/uid/value with the versioned object id alone; CareGraph compares a uid whole (docs/exchange.md).
        q: "SELECT e/ehr_id/value, f/uid/value, c/uid/value FROM EHR e CONTAINS FOLDER f CONTAINS COMPOSITION c WHERE e/ehr_id/value = '${ehr_id2}' AND f/uid/value = '70939d97-8add-4419-b27c-516e64b1c744' AND c/uid/value = '${c_uid4b}::${system_id_with_tenant}::1'",
        expected: 'expected_multiple_ehrs_and_compo_select_by_ids.json',
      },
      {
        q: "SELECT e/ehr_id/value, c/uid/value FROM EHR e CONTAINS FOLDER f CONTAINS COMPOSITION c WHERE f/name/value = 'subsubsubfolder2'",
        expected: 'expected_contains_compo_over_multiple_ehrs.json',
        // Without ORDER BY, AQL leaves the order open: EHRbase answers the older EHR first, CareGraph the EHR with the newest composition.
        anyOrder: true,
      },
    ],
  },
  {
    name: 'FROM_FOLDER_CONTAINS_COMPO/select_all, select_by_name, select_with_version',
    ehrs: [{ folder: 'folder_with_compositions.json', compositions: 4 }],
    cases: [
      {
        q: 'SELECT c/uid/value, f/name/value FROM FOLDER f CONTAINS COMPOSITION c',
        expected: 'expected_folder_contains_compo_select_all.json',
        anyOrder: true,
      },
      ...NAMES.map((name) => ({
        q: `SELECT c/uid/value FROM FOLDER f CONTAINS COMPOSITION c WHERE f/name/value = '${name}'`,
        expected: `expected_folder_contains_compo_select_by_name_${name}.json`,
        anyOrder: true,
      })),
      ...NAMES.map((name) => ({
        q: `SELECT c/uid/value, cv0/commit_audit/time_committed/value FROM FOLDER f CONTAINS VERSION cv0[LATEST_VERSION] CONTAINS COMPOSITION c WHERE f/name/value = '${name}'`,
        expected: `expected_folder_contains_compo_select_with_version_${name}.json`,
        anyOrder: true,
        times: [1],
      })),
    ],
  },
  {
    name: 'FROM_FOLDER_CONTAINS_FOLDER/find_all, find_by',
    ehrs: [{ folder: 'folder_complex_hierarchy.json' }],
    cases: [
      {
        q: 'SELECT f1/uid/value, f1/name/value, f2/uid/value, f2/name/value FROM FOLDER f1 CONTAINS FOLDER f2',
        expected: 'expected_folder_contains_folder_find_all.json',
        anyOrder: true,
      },
      ...(
        [
          ["openEHR-EHR-FOLDER.generic.v1,'root1'", 'openEHR-EHR-FOLDER.episode_of_care.v1'],
          ["openEHR-EHR-FOLDER.generic.v1,'subfolder1'", 'openEHR-EHR-FOLDER.episode_of_care.v1'],
          ["openEHR-EHR-FOLDER.generic.v1,'subfolder2'", 'openEHR-EHR-FOLDER.episode_of_care.v1'],
          ["openEHR-EHR-FOLDER.generic.v1,'root1'", "openEHR-EHR-FOLDER.episode_of_care.v1,'subsubfolder1'"],
        ] as const
      ).map(([outer, inner], i) => ({
        q: `SELECT f2/uid/value, f2/name/value FROM FOLDER f1[${outer}] CONTAINS FOLDER f2[${inner}]`,
        expected: `expected_folder_contains_folder_find_by_${i + 1}.json`,
        anyOrder: true,
      })),
    ],
  },
  {
    name: 'MULTIPLE_EHRS/folder_multiple_ehrs',
    ehrs: [{ folder: 'folder_complex_hierarchy.json' }, { folder: 'folder_complex_hierarchy2.json' }],
    cases: [
      {
        q: "SELECT e/ehr_id/value, f/uid/value FROM EHR e CONTAINS FOLDER f[openEHR-EHR-FOLDER.episode_of_care.v1,'subsubfolder1']",
        expected: 'expected_folder_multiple_ehrs.json',
        anyOrder: true,
      },
    ],
  },
  {
    name: 'MULTIPLE_EHRS/select_by_folder_and_ehr_id',
    ehrs: [{ folder: 'folder_simple_hierarchy.json' }, { folder: 'folder_complex_hierarchy2.json' }],
    cases: [
      {
        q: "SELECT e/ehr_id/value, f/name/value, f/uid/value FROM EHR e CONTAINS FOLDER f WHERE e/ehr_id/value = '${ehr_id1}' AND f/uid/value = 'd936409e-901f-4994-8d33-ed104d460151'",
        expected: 'expected_folder_select_by_folder_and_ehr_id.json',
      },
    ],
  },
  {
    name: 'SELECT_PATHS_IN_FOLDER/find_by_specific_item_id, paths_in_folder',
    ehrs: [{ folder: 'folder_details.json' }],
    cases: [
      {
        q: "SELECT f/uid/value, f/name/value, f/items/id/value FROM FOLDER f WHERE f/items/id/value = '7c0a9df0-564f-4f34-8e65-92586c64ef56'",
        expected: 'expected_folder_find_by_item_id.json',
        anyOrder: true,
      },
      ...(
        [
          ['f/items/id/value', 'items_id_value'],
          ['f/items', 'f_items'],
          ['f/details', 'f_details'],
          ['f/details[at0003]/items[at0004]/value/value', 'f_details_at4_val'],
        ] as const
      ).map(([path, file]) => ({ q: `SELECT ${path} FROM FOLDER f`, expected: `expected_select_paths_in_folder_${file}.json`, anyOrder: true })),
    ],
  },
  {
    name: 'SELECT_PATHS_IN_FOLDER/find_items',
    ehrs: [{ folder: 'folder_multi_compositions.json', compositions: 2, after: 1 }],
    cases: [{ q: 'SELECT f/uid/value, f/name/value, f/archetype_node_id, f/items/id/value FROM FOLDER f', expected: 'expected_folder_find_items.json' }],
  },
];

/** The ids `folder_details.json` files, which name no composition: each stands for one committed before the directory. */
const DETAIL_ITEMS = ['7c0a9df0-564f-4f34-8e65-92586c64ef56', 'c68131a3-72da-41fe-8d11-c4fccfd2d2d0'];

describe(`AQL FROM FOLDER, EHRbase's FOLDER suites (${backendName})`, () => {
  let t: TestPlatform;
  const { raw, newEhr, newComposition } = openEhrCalls(() => t);
  beforeAll(async () => {
    t = await startTestPlatform();
  });
  afterAll(() => t?.stop());

  const aql = async (q: string) => {
    const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q } });
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)} for ${q}`);
    return res.body;
  };

  describe.each(SUITES)('$name', (suite) => {
    /** EHRbase's text → CareGraph's: suite variables, the directories' root uids, folder_details' item ids. */
    const replacements: Array<[string, string]> = [];
    const directories: Array<{ ehrId: string; uid: string }> = [];
    const substitute = (text: string) => replacements.reduce((s, [from, to]) => s.split(from).join(to), text);

    beforeAll(async () => {
      for (const [i, spec] of suite.ehrs.entries()) {
        const ehrId = await newEhr();
        const suffix = i === 0 ? '' : 'b';
        replacements.push([`\${ehr_id${i + 1}}`, ehrId]);
        const commit = async () => newComposition(ehrId);
        for (let n = 1; n <= (spec.compositions ?? 0); n++) {
          const uid = await commit();
          if (!replacements.some(([from]) => from === '${system_id_with_tenant}')) replacements.push(['${system_id_with_tenant}', uid.split('::')[1]]);
          replacements.push([`\${c_uid${n}${suffix}}`, uid.split('::')[0]]);
        }
        let text = fixture(`folder/${spec.folder}`);
        if (spec.folder === 'folder_details.json')
          for (const id of DETAIL_ITEMS) {
            const composition = (await commit()).split('::')[0];
            replacements.push([id, composition]);
            text = text.split(id).join(composition);
          }
        const folder = JSON.parse(substitute(text));
        const created = await raw('POST', `/ehr/${ehrId}/directory`, { body: folder, headers: { prefer: 'return=representation' } });
        expect(created.status).toBe(201);
        const uid = created.body.uid.value as string;
        replacements.unshift([`${folder.uid.value}::\${system_id_with_tenant}::1`, uid]);
        directories.push({ ehrId, uid });
        for (let n = 0; n < (spec.after ?? 0); n++) await commit();
      }
    });
    // As EHRbase's suites delete their EHRs, so the next suite's FROM FOLDER sees only its own directories.
    afterAll(async () => {
      for (const d of directories) expect((await raw('DELETE', `/ehr/${d.ehrId}/directory`, { headers: { 'if-match': `"${d.uid}"` } })).status).toBe(204);
    });

    it.each(suite.cases)('$q', async (c) => {
      const expected = JSON.parse(substitute(fixture(`fields_and_results/folder/${c.expected}`)));
      const answer = await aql(substitute(c.q));
      expect(answer.columns).toEqual(expected.columns);
      const times = c.times ?? [];
      for (const row of answer.rows) for (const i of times) expect(row[i]).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/));
      const compared = (rows: unknown[][]) => rows.map((row) => row.filter((_, i) => !times.includes(i)));
      const sorted = (rows: unknown[][]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      if (c.anyOrder) expect(sorted(compared(answer.rows))).toEqual(sorted(compared(expected.rows)));
      else expect(compared(answer.rows)).toEqual(compared(expected.rows));
    });
  });

  it('answers SELECT f as EHRbase does: every folder whole, typed (SELECT_PATHS_IN_FOLDER/f_from_folder_f)', async () => {
    const ehrId = await newEhr();
    let text = fixture('folder/folder_details.json');
    for (const id of DETAIL_ITEMS) text = text.split(id).join((await newComposition(ehrId)).split('::')[0]);
    const created = await raw('POST', `/ehr/${ehrId}/directory`, { body: JSON.parse(text), headers: { prefer: 'return=representation' } });
    expect(created.status).toBe(201);
    const { rows } = await aql(`SELECT f FROM EHR e[ehr_id/value='${ehrId}'] CONTAINS FOLDER f`);
    expect(rows).toHaveLength(2);
    for (const [folder] of rows) {
      expect(folder).toMatchObject({ _type: 'FOLDER', name: expect.any(Object), archetype_node_id: expect.any(String), details: expect.any(Object) });
      expect(folder.uid).toBeDefined();
    }
    expect(rows[0][0]).toEqual(created.body);
  });

  it('[LOG-001] logs the directories and compositions an answer was computed from, and sees only what the caller may read', async () => {
    const ehrId = await newEhr();
    const filed = await newComposition(ehrId);
    await newComposition(ehrId);
    const tree = {
      _type: 'FOLDER',
      archetype_node_id: 'openEHR-EHR-FOLDER.generic.v1',
      name: { _type: 'DV_TEXT', value: 'root' },
      folders: [
        {
          archetype_node_id: 'openEHR-EHR-FOLDER.episode_of_care.v1',
          name: { value: 'Oncology episode' },
          items: [{ id: { _type: 'HIER_OBJECT_ID', value: filed.split('::')[0] }, namespace: 'local', type: 'VERSIONED_COMPOSITION' }],
        },
      ],
    };
    const created = await raw('POST', `/ehr/${ehrId}/directory`, { body: tree, headers: { prefer: 'return=representation' } });
    expect(created.status).toBe(201);
    const directoryId = (created.body.uid.value as string).split('::')[0];
    const q = `SELECT f/name/value, c/uid/value FROM EHR e[ehr_id/value='${ehrId}'] CONTAINS FOLDER f[openEHR-EHR-FOLDER.episode_of_care.v1] CONTAINS COMPOSITION c`;

    const reader = await t.token({ roles: ['clinician'], sub: 'folder-reader' });
    const before = await compositionDecrypts(t);
    const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q }, token: reader });
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([['Oncology episode', filed]]);
    // Only the filed composition is a candidate: the EHR's other one, and every other EHR's, are not read.
    expect((await compositionDecrypts(t)) - before).toBe(1);
    const tenantWide = await compositionDecrypts(t);
    const all = await aql('SELECT c/uid/value FROM FOLDER f CONTAINS COMPOSITION c');
    expect(all.rows).toContainEqual([filed]);
    // A composition gives a row for each folder it is filed under (the root too), and is decrypted once.
    expect((await compositionDecrypts(t)) - tenantWide).toBe(new Set(all.rows.map(([uid]: string[]) => uid)).size);
    const whole = await t.request('POST', '/openehr/v1/query/aql', {
      body: { q: `SELECT f FROM EHR e[ehr_id/value='${ehrId}'] CONTAINS FOLDER f[openEHR-EHR-FOLDER.episode_of_care.v1]` },
      token: reader,
    });
    // A sub-folder written without _type is answered typed, as EHRbase does.
    expect(whole.body.rows[0][0]).toMatchObject({ _type: 'FOLDER', items: [{ type: 'VERSIONED_COMPOSITION' }] });
    const { rows: logged } = await t.platform.db!.query<{ entityType: string; entityId: string; action: string }>(
      `SELECT "entityType", "entityId", "action" FROM ehr."AccessLog" WHERE "actor" = 'folder-reader' ORDER BY "entityType", "at"`,
    );
    expect(logged).toEqual([
      { entityType: 'Composition', entityId: filed, action: 'list' },
      { entityType: 'Directory', entityId: directoryId, action: 'list' },
      { entityType: 'Directory', entityId: directoryId, action: 'list' },
    ]);

    // A patient's token sees their own record only: another EHR's folders are not there to find.
    const patient = await t.token({ roles: ['patient'], patientId: 'p-1001', sub: 'folder-patient' });
    const theirs = await t.request('POST', '/openehr/v1/query/aql', { body: { q: 'SELECT f/name/value FROM FOLDER f' }, token: patient });
    expect(theirs.status).toBe(200);
    expect(theirs.body.rows).toEqual([]);
  });
});
