import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { VITALS } from './ehr-fixtures';
import { openEhrCalls } from './support/openehr-oas';

const json = { 'content-type': 'application/json' };
const representation = { ...json, prefer: 'return=representation' };
const VERSION_UID = /^[0-9a-f-]{36}::caregraph\.local::\d+$/;

/**
 * The openEHR DIRECTORY (an EHR's versioned FOLDER tree), EHR_STATUS changes
 * as CONTRIBUTIONs and the bare PARTY_SELF of an EHR created without a
 * subject. Every answer the openEHR document names is checked against it.
 */
describe(`openEHR DIRECTORY (${backendName})`, () => {
  let t: TestPlatform;
  const { checked: api, raw, newEhr, newComposition } = openEhrCalls(() => t);
  const ref = (uid: string) => ({ id: { _type: 'HIER_OBJECT_ID', value: uid.split('::')[0] }, namespace: 'local', type: 'VERSIONED_COMPOSITION' });
  const folder = (name: string, extra: Record<string, unknown> = {}) => ({
    _type: 'FOLDER',
    archetype_node_id: 'openEHR-EHR-FOLDER.generic.v1',
    name: { _type: 'DV_TEXT', value: name },
    ...extra,
  });

  beforeAll(async () => {
    t = await startTestPlatform();
  });
  afterAll(() => t?.stop());

  it('[EHR-010] creates, reads, updates and deletes a directory with versions, ETag, Location and Last-Modified', async () => {
    const ehrId = await newEhr();
    const composition = await newComposition(ehrId);
    const tree = folder('root', {
      items: [],
      folders: [folder('episodes', { folders: [folder('2026', { items: [ref(composition)] })] }), folder('referrals')],
    });
    expect((await api('GET', `/ehr/${ehrId}/directory`)).status).toBe(404);

    const created = await api('POST', `/ehr/${ehrId}/directory`, {
      body: tree,
      headers: { ...representation, 'openehr-audit-details': 'committer.name="Dr. Tree", description.value="filing"' },
    });
    expect(created.status).toBe(201);
    const v1 = created.body.uid.value as string;
    expect(v1).toMatch(VERSION_UID);
    expect(v1).toMatch(/::1$/);
    expect(created.headers.get('etag')).toBe(`"${v1}"`);
    expect(created.headers.get('location')).toBe(`${t.url}/openehr/v1/ehr/${ehrId}/directory/${v1}`);
    expect(created.headers.get('last-modified')).toEqual(expect.any(String));
    expect(created.body.folders[0].folders[0].items).toEqual([ref(composition)]);

    const again = await raw('POST', `/ehr/${ehrId}/directory`, { body: tree, headers: json });
    expect(again.status).toBe(409);
    expect(again.headers.get('etag')).toBe(`"${v1}"`);

    const latest = await api('GET', `/ehr/${ehrId}/directory`);
    expect(latest.status).toBe(200);
    expect(latest.body).toEqual(created.body);
    expect(latest.headers.get('etag')).toBe(`"${v1}"`);
    const sub = await api('GET', `/ehr/${ehrId}/directory?path=${encodeURIComponent('episodes/2026')}`);
    expect(sub.status).toBe(200);
    expect(sub.body).toMatchObject({ name: { value: '2026' }, items: [ref(composition)] });
    expect((await api('GET', `/ehr/${ehrId}/directory?path=episodes/1999`)).status).toBe(404);

    const between = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const stale = await api('PUT', `/ehr/${ehrId}/directory`, {
      body: tree,
      headers: { ...json, 'if-match': `"${v1.replace(/::1$/, '::7')}"` },
    });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('etag')).toBe(`"${v1}"`);
    expect((await api('PUT', `/ehr/${ehrId}/directory`, { body: tree, headers: json })).status).toBe(400);

    const renamed = { ...tree, folders: [folder('episodes'), folder('letters')] };
    const updated = await api('PUT', `/ehr/${ehrId}/directory`, { body: renamed, headers: { ...json, 'if-match': `"${v1}"` } });
    expect(updated.status).toBe(204);
    const v2 = v1.replace(/::1$/, '::2');
    expect(updated.headers.get('etag')).toBe(`"${v2}"`);
    expect(updated.headers.get('location')).toBe(`${t.url}/openehr/v1/ehr/${ehrId}/directory/${v2}`);
    const identifier = await raw('PUT', `/ehr/${ehrId}/directory`, {
      body: renamed,
      headers: { ...json, 'if-match': `"${v2}"`, prefer: 'return=identifier' },
    });
    expect(identifier.status).toBe(200);
    const v3 = v1.replace(/::1$/, '::3');
    expect(identifier.body).toEqual({ uid: v3 });

    // Every version stays readable by uid and at a time; a path is looked up in the version asked for.
    expect((await api('GET', `/ehr/${ehrId}/directory/${v1}?path=episodes/2026`)).body.items).toEqual([ref(composition)]);
    expect((await api('GET', `/ehr/${ehrId}/directory/${v3}?path=episodes/2026`)).status).toBe(404);
    expect((await api('GET', `/ehr/${ehrId}/directory/${v3}`)).body.folders.map((f: any) => f.name.value)).toEqual(['episodes', 'letters']);
    const atTime = await api('GET', `/ehr/${ehrId}/directory?version_at_time=${encodeURIComponent(between)}`);
    expect(atTime.status).toBe(200);
    expect(atTime.headers.get('etag')).toBe(`"${v1}"`);
    expect((await api('GET', `/ehr/${ehrId}/directory?version_at_time=2001-01-01T00:00:00Z`)).status).toBe(404);
    expect((await raw('GET', `/ehr/${ehrId}/directory?version_at_time=yesterday`)).status).toBe(400);
    expect((await api('GET', `/ehr/${ehrId}/directory/${v1.replace(/::1$/, '::9')}`)).status).toBe(404);

    expect((await api('DELETE', `/ehr/${ehrId}/directory`, { headers: { 'if-match': `"${v2}"` } })).status).toBe(412);
    expect((await api('DELETE', `/ehr/${ehrId}/directory`)).status).toBe(400);
    const deleted = await api('DELETE', `/ehr/${ehrId}/directory`, { headers: { 'if-match': `"${v3}"` } });
    expect(deleted.status).toBe(204);
    const v4 = v1.replace(/::1$/, '::4');
    expect(deleted.headers.get('etag')).toBe(`"${v4}"`);
    expect((await api('GET', `/ehr/${ehrId}/directory`)).status).toBe(204);
    expect((await api('GET', `/ehr/${ehrId}/directory/${v4}`)).status).toBe(404);
    expect((await api('DELETE', `/ehr/${ehrId}/directory`, { headers: { 'if-match': `"${v4}"` } })).status).toBe(404);
    expect((await api('PUT', `/ehr/${ehrId}/directory`, { body: tree, headers: { ...json, 'if-match': `"${v4}"` } })).status).toBe(404);

    // After a deletion the EHR can have a directory again: the next version of the same VERSIONED_FOLDER.
    const recreated = await api('POST', `/ehr/${ehrId}/directory`, { body: folder('root'), headers: json });
    expect(recreated.status).toBe(201);
    expect(recreated.headers.get('etag')).toBe(`"${v1.replace(/::1$/, '::5')}"`);

    // Each version is a CONTRIBUTION of its own, readable through the EHR's contributions.
    const audit = await t.request('GET', `/api/ehr/audit?entityId=${v1.split('::')[0]}&entityType=Directory`);
    expect(audit.body.data.map((r: any) => r.action).sort()).toEqual(['create', 'create', 'delete', 'update', 'update']);
    const contributionId = audit.body.data.find((r: any) => r.after.uid === v1).after.contributionId as string;
    const contribution = await api('GET', `/ehr/${ehrId}/contribution/${contributionId}`);
    expect(contribution.status).toBe(200);
    expect(contribution.body).toMatchObject({
      versions: [{ id: { value: v1 }, type: 'FOLDER' }],
      audit: { committer: { name: 'Dr. Tree' }, description: { value: 'filing' } },
    });
  });

  it('[EHR-009] commits FOLDER and EHR_STATUS versions with compositions in one CONTRIBUTION, all or none', async () => {
    const ehrId = await newEhr();
    const composition = await newComposition(ehrId);
    const audit = { _type: 'AUDIT_DETAILS', committer: { _type: 'PARTY_IDENTIFIED', name: 'Dr. Batch' }, description: { _type: 'DV_TEXT', value: 'filing' } };
    const change = (code: [string, string], data?: unknown, preceding?: string) => ({
      _type: 'ORIGINAL_VERSION',
      ...(preceding ? { preceding_version_uid: { _type: 'OBJECT_VERSION_ID', value: preceding } } : {}),
      commit_audit: { change_type: { value: code[0], defining_code: { terminology_id: { value: 'openehr' }, code_string: code[1] } } },
      lifecycle_state: { value: 'complete', defining_code: { terminology_id: { value: 'openehr' }, code_string: '532' } },
      ...(data ? { data } : {}),
    });
    const CREATION: [string, string] = ['creation', '249'];
    const MODIFICATION: [string, string] = ['modification', '251'];
    const DELETED: [string, string] = ['deleted', '523'];
    const vitals = { _type: 'COMPOSITION', archetype_details: { template_id: { value: 'vital_signs.v1' } }, content: VITALS };
    const status = (await api('GET', `/ehr/${ehrId}/ehr_status`)).body;
    const status1 = status.uid.value as string;
    const details = { _type: 'ITEM_LIST', archetype_node_id: 'at0001', name: { _type: 'DV_TEXT', value: 'details' }, items: [] };

    // A directory, a status change and a new composition, together.
    const first = await api('POST', `/ehr/${ehrId}/contribution`, {
      body: {
        versions: [
          change(CREATION, folder('root', { folders: [folder('episodes', { items: [ref(composition)] })] })),
          change(MODIFICATION, { ...status, is_queryable: false, other_details: details }, status1),
          change(CREATION, vitals),
        ],
        audit,
      },
      headers: representation,
    });
    expect(first.status).toBe(201);
    const contributionId = first.body.uid.value as string;
    expect(first.body.versions.map((v: any) => v.type)).toEqual(['FOLDER', 'EHR_STATUS', 'COMPOSITION']);
    const [folder1, status2] = first.body.versions.map((v: any) => v.id.value as string);
    expect(folder1).toMatch(VERSION_UID);
    expect(status2).toBe(status1.replace(/::1$/, '::2'));
    const directory = await api('GET', `/ehr/${ehrId}/directory`);
    expect(directory.headers.get('etag')).toBe(`"${folder1}"`);
    expect(directory.body.folders[0].items).toEqual([ref(composition)]);
    const statusNow = await api('GET', `/ehr/${ehrId}/ehr_status`);
    expect(statusNow.body).toMatchObject({ uid: { value: status2 }, is_queryable: false, other_details: details });
    // Each version names the contribution it was committed in.
    expect((await api('GET', `/ehr/${ehrId}/versioned_ehr_status/version/${encodeURIComponent(status2)}`)).body.contribution.id.value).toBe(contributionId);
    const filed = await t.request('GET', `/api/ehr/audit?entityType=Directory&entityId=${folder1.split('::')[0]}`);
    expect(filed.body.data[0].after).toMatchObject({ uid: folder1, contributionId });

    // A later version that fails (a stale EHR_STATUS: 409, as the CONTRIBUTION API names it) leaves the folder change before it uncommitted.
    const stale = await api('POST', `/ehr/${ehrId}/contribution`, {
      body: { versions: [change(MODIFICATION, folder('renamed'), folder1), change(MODIFICATION, { ...status, is_queryable: true }, status1)], audit },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.message).toMatch(/versions\[1\]/);
    expect((await api('GET', `/ehr/${ehrId}/directory`)).headers.get('etag')).toBe(`"${folder1}"`);

    // An EHR_STATUS is never created or deleted through a contribution; two changes of one object in one contribution are refused.
    expect((await api('POST', `/ehr/${ehrId}/contribution`, { body: { versions: [change(CREATION, { ...status, is_queryable: true })], audit } })).status).toBe(
      400,
    );
    const twice = await api('POST', `/ehr/${ehrId}/contribution`, {
      body: { versions: [change(MODIFICATION, folder('a'), folder1), change(DELETED, undefined, folder1)], audit },
    });
    expect(twice.status).toBe(400);
    expect((await api('GET', `/ehr/${ehrId}/directory`)).headers.get('etag')).toBe(`"${folder1}"`);

    // A deletion carries no FOLDER: its preceding version tells what it deletes.
    const deleted = await api('POST', `/ehr/${ehrId}/contribution`, {
      body: { versions: [change(DELETED, undefined, folder1), change(MODIFICATION, { ...status, is_queryable: true }, status2)], audit },
      headers: representation,
    });
    expect(deleted.status).toBe(201);
    expect(deleted.body.versions.map((v: any) => [v.type, v.id.value])).toEqual([
      ['FOLDER', folder1.replace(/::1$/, '::2')],
      ['EHR_STATUS', status1.replace(/::1$/, '::3')],
    ]);
    expect((await api('GET', `/ehr/${ehrId}/directory`)).status).toBe(204);
    expect((await api('GET', `/ehr/${ehrId}/ehr_status`)).body.is_queryable).toBe(true);
  });

  it('refuses bad folders and references to compositions that are not in the EHR (400), and unknown EHRs (404)', async () => {
    const ehrId = await newEhr();
    const other = await newEhr();
    const foreign = await newComposition(other);
    const own = await newComposition(ehrId);
    const refused = async (body: unknown) => {
      const res = await api('POST', `/ehr/${ehrId}/directory`, { body, headers: json });
      expect(res.status).toBe(400);
      return res.body.validationErrors as string[];
    };
    expect((await refused(folder('root', { items: [ref(foreign)] }))).join(' ')).toMatch(/items\[0\]\.id\.value: not a composition of this EHR/);
    expect(await refused(folder('root', { folders: [folder('a', { items: [ref('0b5a2c4e-aaaa-4a11-8a11-00000000aaaa')] })] }))).toEqual([
      'folders[0].items[0].id.value: not a composition of this EHR',
    ]);
    expect(await refused(folder('root', { items: [{ id: { value: 'x' }, namespace: 'local', type: 'COMPOSITION' }] }))).toHaveLength(1);
    expect(await refused(folder('root', { items: [{ ...ref(own), type: 'EHR_STATUS' }] }))).toHaveLength(1);
    expect(await refused(folder('root', { folders: [folder('a'), folder('a')] }))).toEqual(['folders[1].name.value: a sibling folder has this name']);
    expect(await refused({ _type: 'COMPOSITION', name: { value: 'x' }, archetype_node_id: 'x' })).toEqual(['_type: FOLDER expected']);
    expect(await refused({ archetype_node_id: 'openEHR-EHR-FOLDER.generic.v1' })).toHaveLength(1);
    expect((await api('GET', `/ehr/${ehrId}/directory`)).status).toBe(404);
    // A version uid of the EHR's own composition is a valid item.
    const ok = await api('POST', `/ehr/${ehrId}/directory`, {
      body: folder('root', { items: [{ id: { _type: 'OBJECT_VERSION_ID', value: own }, namespace: 'local', type: 'COMPOSITION' }] }),
      headers: json,
    });
    expect(ok.status).toBe(201);
    expect((await api('POST', '/ehr/4f5e6d7c-0000-4000-8000-000000000000/directory', { body: folder('root'), headers: json })).status).toBe(404);
    expect((await api('GET', '/ehr/4f5e6d7c-0000-4000-8000-000000000000/directory')).status).toBe(404);
  });

  it('[EHR-010] lets exactly one of two concurrent changes from the same version win (the other 412)', async () => {
    const ehrId = await newEhr();
    const v1 = (await api('POST', `/ehr/${ehrId}/directory`, { body: folder('root'), headers: json })).headers.get('etag')!;
    const answers = await Promise.all(
      ['a', 'b', 'c'].map((name) => api('PUT', `/ehr/${ehrId}/directory`, { body: folder(name), headers: { ...json, 'if-match': v1 } })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([204, 412, 412]);
    const latest = await api('GET', `/ehr/${ehrId}/directory`);
    expect(latest.headers.get('etag')).toBe(v1.replace(/::1"$/, '::2"'));
  });

  it('keeps directories per tenant and behind the EHR policy point', async () => {
    const ehrId = await newEhr();
    const created = await api('POST', `/ehr/${ehrId}/directory`, { body: folder('root'), headers: json });
    const v1 = created.headers.get('etag')!.replace(/"/g, '');
    const acme = await t.token({ tenants: ['acme'], sub: 'acme-admin' });
    expect((await api('GET', `/ehr/${ehrId}/directory`, { token: acme })).status).toBe(404);
    expect((await api('PUT', `/ehr/${ehrId}/directory`, { body: folder('x'), headers: { ...json, 'if-match': v1 }, token: acme })).status).toBe(404);
    // A nurse reads the EHR record but may not write it (demographics read-only): 403, nothing changes.
    const nurse = await t.token({ roles: ['nurse'] });
    expect((await api('GET', `/ehr/${ehrId}/directory`, { token: nurse })).status).toBe(200);
    expect((await raw('PUT', `/ehr/${ehrId}/directory`, { body: folder('x'), headers: { ...json, 'if-match': v1 }, token: nurse })).status).toBe(403);
    expect((await api('GET', `/ehr/${ehrId}/directory`)).headers.get('etag')).toBe(`"${v1}"`);
    // A receptionist files folders but reads no clinical data: an existing composition is refused exactly
    // like an unknown uid, so a folder write cannot probe which compositions the record holds.
    const receptionist = await t.token({ roles: ['receptionist'], sub: 'directory-receptionist' });
    const existing = await newComposition(ehrId);
    const probeIn = async (uid: string) => {
      const answer = await raw('PUT', `/ehr/${ehrId}/directory`, {
        body: folder('root', { items: [ref(uid)] }),
        headers: { ...json, 'if-match': v1 },
        token: receptionist,
      });
      return { status: answer.status, errors: answer.body?.validationErrors };
    };
    expect(await probeIn(existing)).toEqual(await probeIn('0b5a2c4e-bbbb-4b22-8b22-00000000bbbb'));
    expect((await probeIn(existing)).status).toBe(400);
    // Folder names are stored encrypted.
    const rows = await t.platform.db!.query<{ contentEnc: string }>('SELECT "contentEnc" FROM ehr."DirectoryVersion" WHERE uid = $1', [v1]);
    expect(rows.rows[0].contentEnc).not.toContain('root');
  });

  it('records EHR_STATUS changes as CONTRIBUTIONs and gives an EHR without a subject a bare PARTY_SELF', async () => {
    const ehrId = await newEhr();
    const v1 = await api('GET', `/ehr/${ehrId}/ehr_status`);
    expect(v1.body.subject).toEqual({ _type: 'PARTY_SELF' });
    const version1 = await api('GET', `/ehr/${ehrId}/versioned_ehr_status/version/${v1.body.uid.value}`);
    const first = await api('GET', `/ehr/${ehrId}/contribution/${version1.body.contribution.id.value}`);
    expect(first.status).toBe(200);
    expect(first.body.versions).toEqual([{ id: { _type: 'OBJECT_VERSION_ID', value: v1.body.uid.value }, namespace: 'local', type: 'EHR_STATUS' }]);

    const put = await api('PUT', `/ehr/${ehrId}/ehr_status`, {
      body: { ...v1.body, is_queryable: false },
      headers: { ...json, 'if-match': `"${v1.body.uid.value}"`, 'x-change-reason': 'hide from queries', prefer: 'return=representation' },
    });
    expect(put.status).toBe(200);
    expect(put.body.subject).toEqual({ _type: 'PARTY_SELF' });
    const version2 = await api('GET', `/ehr/${ehrId}/versioned_ehr_status/version/${put.body.uid.value}`);
    const second = await api('GET', `/ehr/${ehrId}/contribution/${version2.body.contribution.id.value}`);
    expect(second.body).toMatchObject({
      versions: [{ id: { value: put.body.uid.value }, type: 'EHR_STATUS' }],
      audit: { change_type: { value: 'creation' }, description: { value: 'hide from queries' } },
    });
    expect(version2.body.contribution.id.value).not.toBe(version1.body.contribution.id.value);

    // A registered patient's EHR names the patient (a GENERIC_ID, which the document's HIER_OBJECT_ID-only schema does not allow: unchecked), and its creation is a contribution too.
    const patient = await t.graphql('mutation { createPatient(input: { givenNames: ["Ada"], family: "Visser" }) { id ehrId } }');
    const { id, ehrId: patientEhr } = patient.body.data.createPatient;
    const status = await raw('GET', `/ehr/${patientEhr}/ehr_status`);
    expect(status.body.subject).toMatchObject({ _type: 'PARTY_SELF', external_ref: { id: { value: id }, namespace: 'caregraph' } });
    const version = await raw('GET', `/ehr/${patientEhr}/versioned_ehr_status/version/${status.body.uid.value}`);
    expect((await api('GET', `/ehr/${patientEhr}/contribution/${version.body.contribution.id.value}`)).body.versions[0].type).toBe('EHR_STATUS');
  });
});
