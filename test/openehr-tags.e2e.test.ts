import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { openEhrCalls } from './support/openehr-oas';
import { envelope, VITALS } from './ehr-fixtures';

const json = { 'content-type': 'application/json' };
const representation = { ...json, prefer: 'return=representation' };

/**
 * openEHR ITEM_TAGs of compositions and EHR_STATUS: the tag lists of a
 * versioned object and of one version, the EHR-wide list with its filters,
 * replacing and deleting, bad input, and who may see and change them. Every
 * answer the openEHR document names is checked against it.
 */
describe(`openEHR ITEM_TAG (${backendName})`, () => {
  let t: TestPlatform;
  const { checked: api, raw, newEhr, newComposition } = openEhrCalls(() => t);
  const ref = (uid: string, type: string) => ({
    id: { _type: uid.includes('::') ? 'OBJECT_VERSION_ID' : 'HIER_OBJECT_ID', value: uid },
    namespace: 'local',
    type,
  });
  const owner = (ehrId: string) => ({ id: { _type: 'HIER_OBJECT_ID', value: ehrId }, namespace: 'local', type: 'EHR' });

  let ehrId: string;
  let versionUid: string;
  let objectUid: string;

  beforeAll(async () => {
    t = await startTestPlatform();
    ehrId = await newEhr();
    versionUid = await newComposition(ehrId);
    objectUid = versionUid.split('::')[0];
  });
  afterAll(() => t?.stop());

  it('sets, reads, filters and deletes the tags of a composition and of one of its versions', async () => {
    expect((await api('GET', `/ehr/${ehrId}/composition/${objectUid}/tags`)).body).toEqual([]);

    const set = await api('PUT', `/ehr/${ehrId}/composition/${objectUid}/tags`, {
      body: [
        { key: 'flag', value: 'follow-up', target_path: '/context/start_time/value' },
        { key: 'category', value: 'final' },
        { key: 'flag', value: 'whole' },
      ],
      headers: representation,
    });
    expect(set.status).toBe(200);
    expect(set.headers.get('content-type')).toBe('application/json');
    expect(set.body).toEqual([
      { key: 'category', value: 'final', target: ref(objectUid, 'COMPOSITION'), owner_id: owner(ehrId) },
      { key: 'flag', value: 'whole', target: ref(objectUid, 'COMPOSITION'), owner_id: owner(ehrId) },
      { key: 'flag', value: 'follow-up', target_path: '/context/start_time/value', target: ref(objectUid, 'COMPOSITION'), owner_id: owner(ehrId) },
    ]);
    expect((await api('GET', `/ehr/${ehrId}/composition/${objectUid}/tags`)).body).toEqual(set.body);

    // A version's tags are its own; return=minimal (the default) answers 204.
    const minimal = await api('PUT', `/ehr/${ehrId}/composition/${versionUid}/tags`, { body: [{ key: 'reviewed' }], headers: json });
    expect(minimal.status).toBe(204);
    expect((await api('GET', `/ehr/${ehrId}/composition/${versionUid}/tags`)).body).toEqual([
      { key: 'reviewed', target: ref(versionUid, 'COMPOSITION'), owner_id: owner(ehrId) },
    ]);

    const all = await api('GET', `/ehr/${ehrId}/tags`);
    expect(all.body.map((tag: { key: string }) => tag.key).sort()).toEqual(['category', 'flag', 'flag', 'reviewed']);
    expect((await api('GET', `/ehr/${ehrId}/tags?tag_key=flag`)).body).toHaveLength(2);
    expect((await api('GET', `/ehr/${ehrId}/tags?tag_key=flag&tag_value=follow-up`)).body).toEqual([set.body[2]]);
    expect((await api('GET', `/ehr/${ehrId}/tags?tag_target_path=${encodeURIComponent('/context/start_time/value')}`)).body).toEqual([set.body[2]]);
    expect((await api('GET', `/ehr/${ehrId}/tags?tag_key=none`)).body).toEqual([]);

    // DELETE removes every tag with the key, whatever its path; a second time there is nothing to delete.
    expect((await api('DELETE', `/ehr/${ehrId}/composition/${objectUid}/tags/flag`)).status).toBe(204);
    expect((await api('DELETE', `/ehr/${ehrId}/composition/${objectUid}/tags/flag`)).status).toBe(404);
    expect((await api('GET', `/ehr/${ehrId}/composition/${objectUid}/tags`)).body).toEqual([set.body[0]]);

    // A key is any printable text, spaces and slashes included.
    await api('PUT', `/ehr/${ehrId}/composition/${objectUid}/tags`, { body: [{ key: 'category', value: 'final' }, { key: 'to do/soon' }], headers: json });
    expect((await api('DELETE', `/ehr/${ehrId}/composition/${objectUid}/tags/${encodeURIComponent('to do/soon')}`)).status).toBe(204);
    expect((await api('GET', `/ehr/${ehrId}/composition/${objectUid}/tags`)).body).toEqual([set.body[0]]);

    // An empty list removes them all.
    expect((await api('PUT', `/ehr/${ehrId}/composition/${objectUid}/tags`, { body: [], headers: json })).status).toBe(204);
    expect((await api('GET', `/ehr/${ehrId}/composition/${objectUid}/tags`)).body).toEqual([]);
  });

  it('tags the EHR_STATUS by its versioned object uid or a version uid', async () => {
    const status = await api('GET', `/ehr/${ehrId}/ehr_status`);
    const statusVersion = status.body.uid.value as string;
    const statusObject = statusVersion.split('::')[0];
    const set = await api('PUT', `/ehr/${ehrId}/ehr_status/${statusObject}/tags`, {
      body: [{ key: 'consent-checked', value: 'yes' }],
      headers: representation,
    });
    expect(set.status).toBe(200);
    expect(set.body).toEqual([{ key: 'consent-checked', value: 'yes', target: ref(statusObject, 'EHR_STATUS'), owner_id: owner(ehrId) }]);
    await api('PUT', `/ehr/${ehrId}/ehr_status/${statusVersion}/tags`, { body: [{ key: 'imported' }], headers: json });
    expect((await api('GET', `/ehr/${ehrId}/ehr_status/${statusVersion}/tags`)).body).toEqual([
      { key: 'imported', target: ref(statusVersion, 'EHR_STATUS'), owner_id: owner(ehrId) },
    ]);
    expect((await api('GET', `/ehr/${ehrId}/tags?tag_key=consent-checked`)).body).toEqual(set.body);
    expect((await api('DELETE', `/ehr/${ehrId}/ehr_status/${statusVersion}/tags/imported`)).status).toBe(204);
    // A composition's uid names no EHR_STATUS, nor does another EHR's status.
    expect((await api('GET', `/ehr/${ehrId}/ehr_status/${objectUid}/tags`)).status).toBe(404);
    const other = await newEhr();
    expect((await api('GET', `/ehr/${other}/ehr_status/${statusObject}/tags`)).status).toBe(404);
  });

  it('refuses bad tag lists with 400 naming the tag, and changes nothing', async () => {
    await api('PUT', `/ehr/${ehrId}/composition/${objectUid}/tags`, { body: [{ key: 'kept' }], headers: json });
    const cases: Array<[unknown, string]> = [
      [{ key: 'not-a-list' }, 'tags'],
      [['flag'], 'tags[0]'],
      [[{ value: 'no key' }], 'tags[0].key'],
      [[{ key: ' padded' }], 'tags[0].key'],
      [[{ key: 'flag', colour: 'red' }], 'tags[0].colour'],
      [[{ key: 'flag', value: 7 }], 'tags[0].value'],
      [[{ key: 'flag', target_path: 'context/start_time' }], 'tags[0].target_path'],
      [[{ key: 'flag' }, { key: 'flag' }], 'tags[1].key'],
      [Array.from({ length: 101 }, (_, i) => ({ key: `k${i}` })), 'tags'],
    ];
    for (const [body, path] of cases) {
      const res = await api('PUT', `/ehr/${ehrId}/composition/${objectUid}/tags`, { body, headers: json });
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const text = await raw('PUT', `/ehr/${ehrId}/composition/${objectUid}/tags`, { body: 'flag', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect((await api('GET', `/ehr/${ehrId}/tags?tag_key=a&tag_key=b`)).status).toBe(400);
    expect((await api('GET', `/ehr/${ehrId}/composition/${objectUid}/tags`)).body.map((tag: { key: string }) => tag.key)).toEqual(['kept']);
  });

  it('answers 404 for an unknown EHR, composition or version, and for a composition of another EHR', async () => {
    const other = await newEhr();
    const unknown = '0b6a8c36-1111-4c6e-9e5e-3f1f3f1f3f1f';
    expect((await api('GET', `/ehr/${unknown}/composition/${objectUid}/tags`)).status).toBe(404);
    expect((await api('GET', `/ehr/${ehrId}/composition/${unknown}/tags`)).status).toBe(404);
    expect((await api('GET', `/ehr/${ehrId}/composition/${objectUid}::caregraph.local::9/tags`)).status).toBe(404);
    expect((await api('GET', `/ehr/${other}/composition/${objectUid}/tags`)).status).toBe(404);
    expect((await api('PUT', `/ehr/${other}/composition/${objectUid}/tags`, { body: [{ key: 'x' }], headers: json })).status).toBe(404);
    expect((await api('DELETE', `/ehr/${ehrId}/composition/${unknown}/tags/x`)).status).toBe(404);
    expect((await api('GET', `/ehr/${unknown}/tags`)).status).toBe(404);
  });

  it('shows and changes tags only for whoever may read and change the target', async () => {
    const ehr = await newEhr();
    const uid = (await newComposition(ehr)).split('::')[0];
    await api('PUT', `/ehr/${ehr}/composition/${uid}/tags`, { body: [{ key: 'observation-tag' }], headers: json });
    const status = (await api('GET', `/ehr/${ehr}/ehr_status`)).body.uid.value.split('::')[0] as string;
    await api('PUT', `/ehr/${ehr}/ehr_status/${status}/tags`, { body: [{ key: 'status-tag' }], headers: json });

    // Receptionists read demographics but no observations: the EHR's list leaves the composition's tags out.
    const receptionist = await t.token({ roles: ['receptionist'], sub: 'tags-receptionist' });
    expect((await api('GET', `/ehr/${ehr}/tags`, { token: receptionist })).body.map((tag: { key: string }) => tag.key)).toEqual(['status-tag']);
    expect([403, 404]).toContain((await raw('GET', `/ehr/${ehr}/composition/${uid}/tags`, { token: receptionist })).status);
    // Nurses read orders but may not write them; they read and write observations.
    const nurse = await t.token({ roles: ['nurse'], sub: 'tags-nurse' });
    expect((await api('PUT', `/ehr/${ehr}/composition/${uid}/tags`, { body: [{ key: 'nurse-tag' }], headers: json, token: nurse })).status).toBe(204);
    expect((await raw('PUT', `/ehr/${ehr}/ehr_status/${status}/tags`, { body: [{ key: 'x' }], headers: json, token: nurse })).status).toBe(403);
    // Another tenant sees nothing.
    const acme = await t.token({ tenants: ['acme'], sub: 'acme-admin' });
    expect((await api('GET', `/ehr/${ehr}/tags`, { token: acme })).status).toBe(404);
    expect((await api('GET', `/ehr/${ehr}/composition/${uid}/tags`, { token: acme })).status).toBe(404);
  });
  it('sets tags with a commit from the openehr-item-tag headers, in its transaction, and answers them as headers', async () => {
    const ehr = await newEhr();
    const tagged = {
      ...json,
      'openehr-item-tag': 'key="category",value="final"; key="flag",value="say \\"hi\\"",target_path="/context/start_time/value"',
      'openehr-version-item-tag': 'key="reviewed"',
    };
    const created = await api('POST', `/ehr/${ehr}/composition`, { body: envelope(VITALS), headers: tagged });
    expect(created.status).toBe(201);
    const v1 = created.headers.get('etag')!.replace(/"/g, '');
    const object = v1.split('::')[0];
    expect(created.headers.get('openehr-item-tag')).toBe(
      'key="category",value="final"; key="flag",value="say \\"hi\\"",target_path="/context/start_time/value"',
    );
    expect(created.headers.get('openehr-version-item-tag')).toBe('key="reviewed"');
    expect((await api('GET', `/ehr/${ehr}/composition/${object}/tags`)).body.map((tag: any) => [tag.key, tag.value])).toEqual([
      ['category', 'final'],
      ['flag', 'say "hi"'],
    ]);
    expect((await api('GET', `/ehr/${ehr}/composition/${v1}/tags`)).body).toEqual([{ key: 'reviewed', target: ref(v1, 'COMPOSITION'), owner_id: owner(ehr) }]);

    // A read answers the version's tags and its versioned object's.
    const read = await api('GET', `/ehr/${ehr}/composition/${object}`);
    expect(read.headers.get('openehr-version-item-tag')).toBe('key="reviewed"');
    expect(read.headers.get('openehr-item-tag')).toContain('key="category"');

    // An update replaces the versioned object's list and tags the new version; the old version keeps its own.
    const updated = await api('PUT', `/ehr/${ehr}/composition/${object}`, {
      body: envelope(VITALS),
      headers: { ...json, 'if-match': `"${v1}"`, 'openehr-item-tag': 'key="category",value="amended"', 'openehr-version-item-tag': 'key="second"' },
    });
    expect(updated.status).toBe(204);
    const v2 = updated.headers.get('etag')!.replace(/"/g, '');
    expect(updated.headers.get('openehr-item-tag')).toBe('key="category",value="amended"');
    expect((await api('GET', `/ehr/${ehr}/composition/${v1}/tags`)).body.map((tag: any) => tag.key)).toEqual(['reviewed']);
    expect((await api('GET', `/ehr/${ehr}/composition/${v2}/tags`)).body.map((tag: any) => tag.key)).toEqual(['second']);

    // EHR_STATUS takes them the same way.
    const status = await api('GET', `/ehr/${ehr}/ehr_status`);
    const statusUid = status.body.uid.value as string;
    const put = await api('PUT', `/ehr/${ehr}/ehr_status`, {
      body: status.body,
      headers: { ...json, 'if-match': `"${statusUid}"`, 'openehr-version-item-tag': 'key="consent-checked",value="yes"' },
    });
    expect(put.status).toBe(204);
    const status2 = put.headers.get('etag')!.replace(/"/g, '');
    expect(put.headers.get('openehr-version-item-tag')).toBe('key="consent-checked",value="yes"');
    expect((await api('GET', `/ehr/${ehr}/ehr_status/${status2}/tags`)).body.map((tag: any) => tag.value)).toEqual(['yes']);
  });

  it('refuses a commit whose tag headers are malformed or hold a bad tag, and commits nothing', async () => {
    const ehr = await newEhr();
    for (const header of ['key=category', 'key="a",colour="red"', 'key="a" key="b"', 'key="",value="empty key"', 'key="a"; key="a"']) {
      const res = await raw('POST', `/ehr/${ehr}/composition`, { body: envelope(VITALS), headers: { ...json, 'openehr-item-tag': header } });
      expect({ header, status: res.status }).toEqual({ header, status: 400 });
    }
    const query = await raw('POST', '/query/aql', {
      body: { q: `SELECT c/uid/value FROM EHR e[ehr_id/value='${ehr}'] CONTAINS COMPOSITION c` },
      headers: json,
    });
    expect(query.body.rows).toEqual([]);
    expect((await api('GET', `/ehr/${ehr}/tags`)).body).toEqual([]);
  });
});
