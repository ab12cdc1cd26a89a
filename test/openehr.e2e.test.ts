import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { envelope, VITALS } from './ehr-fixtures';
import { openEhrCalls } from './support/openehr-oas';

const V1 = /^([0-9a-f-]{36})::caregraph\.local::1$/;
const json = { 'content-type': 'application/json' };
const representation = { ...json, prefer: 'return=representation' };

describe(`openEHR REST API /openehr/v1 (${backendName})`, () => {
  let t: TestPlatform;
  let acme: string;
  /**
   * `checked` answers are checked against the openEHR OAS: the COMPOSITION calls (canonical RM bodies
   * included). Not the others here: the demo EHRs keep their non-UUID ids and name registered patients by
   * GENERIC_ID, and this file also covers CareGraph's extensions (JSON templates) and the 501s.
   */
  const { checked, raw: api } = openEhrCalls(() => t);
  /** vital_signs.v1 is an operational template: its compositions come back as canonical RM. */
  const systolic = (composition: any) =>
    composition.content
      .find((e: any) => e.archetype_node_id === 'openEHR-EHR-OBSERVATION.blood_pressure.v2')
      .data.events[0].data.items.find((i: any) => i.archetype_node_id === 'at0004').value.magnitude;

  beforeAll(async () => {
    t = await startTestPlatform();
    acme = await t.token({ tenants: ['acme'], sub: 'acme-admin' });
  });
  afterAll(() => t?.stop());

  describe('EHR and EHR_STATUS', () => {
    it('gets an EHR by id and by subject', async () => {
      const byId = await api('GET', '/ehr/ehr-p-1001');
      expect(byId.status).toBe(200);
      expect(byId.body).toMatchObject({
        system_id: { value: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/) },
        ehr_id: { value: 'ehr-p-1001' },
        ehr_status: { type: 'EHR_STATUS' },
        time_created: { value: expect.any(String) },
      });
      const bySubject = await api('GET', '/ehr?subject_id=p-1001&subject_namespace=caregraph');
      expect(bySubject.status).toBe(200);
      expect(bySubject.body.ehr_id.value).toBe('ehr-p-1001');
      expect((await api('GET', '/ehr?subject_id=p-1001&subject_namespace=elsewhere')).status).toBe(404);
    });

    it('answers POST /ehr with 409 for a patient that has an EHR and 400 for an unregistered patient id', async () => {
      const status = (id: string) => ({
        _type: 'EHR_STATUS',
        subject: { external_ref: { id: { value: id }, namespace: 'caregraph', type: 'PERSON' } },
        is_queryable: true,
        is_modifiable: true,
      });
      const conflict = await api('POST', '/ehr', { body: status('p-1001') });
      expect(conflict.status).toBe(409);
      expect(conflict.body).toMatchObject({ message: expect.any(String), error: { code: 'CONFLICT' } });
      expect((await api('POST', '/ehr', { body: status('p-9999') })).status).toBe(400);
      expect((await api('POST', '/ehr', { body: status('p-2001') })).status).toBe(400);
    });

    it('[EHR-008] versions EHR_STATUS, requires If-Match, answers 412 on a stale one and audits the change with openehr-audit-details', async () => {
      const current = await api('GET', '/ehr/ehr-p-1003/ehr_status');
      expect(current.status).toBe(200);
      expect(current.body).toMatchObject({
        _type: 'EHR_STATUS',
        is_queryable: true,
        is_modifiable: true,
        subject: { external_ref: { id: { value: 'p-1003' } } },
      });
      const uid = current.body.uid.value as string;
      expect(current.headers.get('etag')).toBe(`"${uid}"`);
      const body = { ...current.body, is_modifiable: false };
      expect((await api('PUT', '/ehr/ehr-p-1003/ehr_status', { body })).status).toBe(400);
      const stale = await api('PUT', '/ehr/ehr-p-1003/ehr_status', { body, headers: { 'if-match': `"${uid.replace(/::1$/, '::7')}"` } });
      expect(stale.status).toBe(412);
      expect(stale.headers.get('etag')).toBe(`"${uid}"`);
      const updated = await api('PUT', '/ehr/ehr-p-1003/ehr_status', {
        body,
        headers: { ...representation, 'if-match': `"${uid}"`, 'openehr-audit-details': 'committer.name="Dr. Jones", description.value="record closed"' },
      });
      expect(updated.status).toBe(200);
      expect(updated.body.is_modifiable).toBe(false);
      expect(updated.body.uid.value).toBe(uid.replace(/::1$/, '::2'));
      expect(updated.headers.get('etag')).toBe(`"${updated.body.uid.value}"`);
      const first = await api('GET', `/ehr/ehr-p-1003/ehr_status/${encodeURIComponent(uid)}`);
      expect(first.body.is_modifiable).toBe(true);
      const audit = await t.request('GET', '/api/ehr/audit?entityId=ehr-p-1003&entityType=EhrStatus');
      expect(audit.body.data[0]).toMatchObject({ action: 'update', reason: 'record closed (committer: Dr. Jones)', after: { isModifiable: false } });
      const refused = await api('POST', '/ehr/ehr-p-1003/composition', { body: envelope(VITALS) });
      expect(refused.status).toBe(409);
    });
  });

  describe('COMPOSITION', () => {
    let uid: string;
    let id: string;

    it('[XCH-007] creates a composition (envelope, Prefer: return=representation) with 201, Location, ETag and Last-Modified', async () => {
      const res = await checked('POST', '/ehr/ehr-p-1001/composition', {
        body: envelope(VITALS),
        headers: { ...representation, 'openehr-audit-details': 'committer.name="Nurse Ann", description.value="morning round"' },
      });
      expect(res.status).toBe(201);
      uid = res.body.uid.value;
      id = V1.exec(uid)![1];
      expect(res.headers.get('etag')).toBe(`"${uid}"`);
      expect(res.headers.get('location')).toBe(`${t.url}/openehr/v1/ehr/ehr-p-1001/composition/${uid}`);
      expect(new Date(res.headers.get('last-modified')!).getTime()).not.toBeNaN();
      expect(res.body).toMatchObject({
        _type: 'COMPOSITION',
        name: { value: 'Vital signs' },
        archetype_details: { template_id: { value: 'vital_signs.v1' } },
        composer: { name: 'test-user' },
        context: { start_time: { value: VITALS.recorded_at } },
        content: [
          expect.objectContaining({ archetype_node_id: 'openEHR-EHR-OBSERVATION.blood_pressure.v2' }),
          expect.objectContaining({ archetype_node_id: 'openEHR-EHR-OBSERVATION.pulse.v2' }),
        ],
      });
      expect(systolic(res.body)).toBe(VITALS.blood_pressure.systolic.magnitude);
      const audit = await t.request('GET', `/api/ehr/audit?entityId=${id}`);
      expect(audit.body.data[0]).toMatchObject({
        action: 'create',
        entityType: 'Composition',
        actor: 'test-user',
        reason: 'morning round (committer: Nurse Ann)',
      });
    });

    it('creates from flat content with ?templateId and answers minimal by default', async () => {
      const res = await checked('POST', '/ehr/ehr-p-1002/composition?templateId=vital_signs.v1', { body: VITALS });
      expect(res.status).toBe(201);
      expect(res.text).toBe('');
      expect(res.headers.get('etag')).toMatch(/^"[0-9a-f-]{36}::caregraph\.local::1"$/);
    });

    it('gets by versioned object uid and by version uid', async () => {
      const latest = await checked('GET', `/ehr/ehr-p-1001/composition/${id}`);
      expect(latest.status).toBe(200);
      expect(latest.body.uid.value).toBe(uid);
      const version = await checked('GET', `/ehr/ehr-p-1001/composition/${uid}`);
      expect(version.body.content).toEqual(latest.body.content);
      expect(systolic(version.body)).toBe(VITALS.blood_pressure.systolic.magnitude);
      expect((await checked('GET', `/ehr/ehr-p-1002/composition/${uid}`)).status).toBe(404);
    });

    it('[EHR-004] updates with If-Match: 400 without, 412 (with the latest in ETag and Location) when stale, a new version when current', async () => {
      const changed = { ...VITALS, blood_pressure: { ...VITALS.blood_pressure, systolic: { magnitude: 135, unit: 'mm[Hg]' } } };
      expect((await checked('PUT', `/ehr/ehr-p-1001/composition/${id}`, { body: envelope(changed) })).status).toBe(400);
      const ok = await checked('PUT', `/ehr/ehr-p-1001/composition/${id}`, { body: envelope(changed), headers: { ...representation, 'if-match': `"${uid}"` } });
      expect(ok.status).toBe(200);
      const v2 = ok.body.uid.value;
      expect(v2).toBe(`${id}::caregraph.local::2`);
      expect(systolic(ok.body)).toBe(135);
      const stale = await checked('PUT', `/ehr/ehr-p-1001/composition/${id}`, { body: envelope(changed), headers: { 'if-match': `"${uid}"` } });
      expect(stale.status).toBe(412);
      expect(stale.headers.get('etag')).toBe(`"${v2}"`);
      expect(stale.headers.get('location')).toContain(`/composition/${v2}`);
      const minimal = await checked('PUT', `/ehr/ehr-p-1001/composition/${id}`, { body: envelope(VITALS), headers: { 'if-match': v2 } });
      expect(minimal.status).toBe(204);
      expect(minimal.headers.get('etag')).toBe(`"${id}::caregraph.local::3"`);
    });

    it('shows the versioned composition, its revision history and each version', async () => {
      const versioned = await api('GET', `/ehr/ehr-p-1001/versioned_composition/${id}`);
      expect(versioned.body).toMatchObject({ _type: 'VERSIONED_COMPOSITION', uid: { value: id }, owner_id: { id: { value: 'ehr-p-1001' } } });
      const history = await checked('GET', `/ehr/ehr-p-1001/versioned_composition/${id}/revision_history`);
      expect(history.body._type).toBe('REVISION_HISTORY');
      expect(
        history.body.items.map((h: any) => [h.version_id.value, h.audits[0].change_type.value, h.audits[0].change_type.defining_code.code_string]),
      ).toEqual([
        [uid, 'creation', '249'],
        [`${id}::caregraph.local::2`, 'modification', '251'],
        [`${id}::caregraph.local::3`, 'modification', '251'],
      ]);
      const v2 = await checked('GET', `/ehr/ehr-p-1001/versioned_composition/${id}/version/${id}::caregraph.local::2`);
      expect(v2.body).toMatchObject({
        _type: 'ORIGINAL_VERSION',
        preceding_version_uid: { value: uid },
        lifecycle_state: { value: 'complete' },
      });
      expect(systolic(v2.body.data)).toBe(135);
      const atTime = await checked(
        'GET',
        `/ehr/ehr-p-1001/versioned_composition/${id}/version?version_at_time=${encodeURIComponent(new Date().toISOString())}`,
      );
      expect(atTime.body.uid.value).toBe(`${id}::caregraph.local::3`);
    });

    it('[EHR-004] deletes logically: 409 for a stale version, 204, then GET answers 204, deleting again 400, and the history keeps every version', async () => {
      const stale = await checked('DELETE', `/ehr/ehr-p-1001/composition/${uid}`);
      expect(stale.status).toBe(409);
      const latest = `${id}::caregraph.local::3`;
      const deleted = await checked('DELETE', `/ehr/ehr-p-1001/composition/${latest}`, { headers: { 'x-change-reason': 'entered in error' } });
      expect(deleted.status).toBe(204);
      expect(deleted.headers.get('etag')).toBe(`"${id}::caregraph.local::4"`);
      expect((await checked('GET', `/ehr/ehr-p-1001/composition/${id}`)).status).toBe(204);
      expect((await checked('GET', `/ehr/ehr-p-1001/composition/${latest}`)).status).toBe(200);
      expect((await checked('DELETE', `/ehr/ehr-p-1001/composition/${id}::caregraph.local::4`)).status).toBe(400);
      const history = await checked('GET', `/ehr/ehr-p-1001/versioned_composition/${id}/revision_history`);
      expect(history.body.items.at(-1).audits[0].change_type).toMatchObject({ value: 'deleted', defining_code: { code_string: '523' } });
      const audit = await t.request('GET', `/api/ehr/audit?entityId=${id}`);
      expect(audit.body.data[0]).toMatchObject({ action: 'delete', reason: 'entered in error' });
    });

    it('[EHR-003] answers 422 with validationErrors for content that breaks the template and for unknown templates, 400 for a missing template id', async () => {
      const broken = await checked('POST', '/ehr/ehr-p-1001/composition', {
        body: envelope({ ...VITALS, blood_pressure: { systolic: { magnitude: 1200, unit: 'mm[Hg]' } } }),
      });
      expect(broken.status).toBe(422);
      expect(broken.body).toMatchObject({
        code: 'COMPOSITION_INVALID',
        validationErrors: expect.arrayContaining([expect.stringContaining('blood_pressure.systolic.magnitude')]),
        error: { code: 'COMPOSITION_INVALID' },
      });
      expect((await checked('POST', '/ehr/ehr-p-1001/composition', { body: envelope(VITALS, 'nope.v1') })).status).toBe(422);
      expect((await checked('POST', '/ehr/ehr-p-1001/composition', { body: VITALS })).status).toBe(400);
      // XML is canonical XML (test/openehr-xml.e2e.test.ts): an empty composition is invalid; plain text is no composition type.
      expect((await checked('POST', '/ehr/ehr-p-1001/composition', { rawBody: '<composition/>', headers: { 'content-type': 'application/xml' } })).status).toBe(
        400,
      );
      expect((await api('POST', '/ehr/ehr-p-1001/composition', { rawBody: 'composition', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    });

    it('[SEC-004] keeps tenants apart: other-tenant EHRs and compositions answer 404', async () => {
      expect((await checked('GET', '/ehr/ehr-p-2001')).status).toBe(404);
      expect((await checked('POST', '/ehr/ehr-p-2001/composition', { body: envelope(VITALS) })).status).toBe(404);
      const mine = await checked('POST', '/ehr/ehr-p-1001/composition', { body: envelope(VITALS), headers: representation });
      expect((await checked('GET', `/ehr/ehr-p-1001/composition/${mine.body.uid.value}`, { token: acme })).status).toBe(404);
      expect((await checked('GET', '/ehr/ehr-p-1001', { token: acme })).status).toBe(404);
    });
  });

  describe('DEFINITION', () => {
    const weight = {
      template_id: 'weight.v1',
      name: 'Body weight',
      area: 'observation',
      definition: {
        type: 'object',
        children: {
          weight: { type: 'quantity', required: true, units: [{ unit: 'kg', min: 0, max: 500 }] },
          measured_at: { type: 'date_time', required: true },
        },
      },
    };

    it('uploads a JSON template, lists it, returns it and its web template; XML that is no OPT is refused with 400', async () => {
      const up = await api('POST', '/definition/template/adl1.4', { body: weight });
      expect(up.status).toBe(201);
      expect(up.headers.get('location')).toBe(`${t.url}/openehr/v1/definition/template/adl1.4/weight.v1`);
      expect((await api('POST', '/definition/template/adl1.4', { body: { ...weight, name: 'Other' } })).status).toBe(409);
      const list = await api('GET', '/definition/template/adl1.4');
      expect(list.body.map((x: any) => x.template_id)).toEqual(expect.arrayContaining(['vital_signs.v1', 'weight.v1']));
      const one = await api('GET', '/definition/template/adl1.4/weight.v1');
      expect(one.body).toMatchObject({ template_id: 'weight.v1', area: 'observation', definition: weight.definition });
      const jsonWeb = await api('GET', '/definition/template/adl1.4/weight.v1', { headers: { accept: 'application/openehr.wt+json' } });
      expect(jsonWeb.status).toBe(200);
      expect(jsonWeb.body).toMatchObject({ templateId: 'weight.v1', tree: { rmType: 'COMPOSITION' } });
      expect(jsonWeb.body.tree.children[0].children.find((c: any) => c.id === 'weight')).toMatchObject({ rmType: 'DV_QUANTITY', aqlPath: '/content/weight' });
      // The demo vital signs are an operational template: its web template has the archetype paths.
      const web = await api('GET', '/definition/template/adl1.4/vital_signs.v1', { headers: { accept: 'application/openehr.wt+json' } });
      expect(web.status).toBe(200);
      expect(web.body).toMatchObject({ templateId: 'vital_signs.v1', tree: { id: 'vital_signs', rmType: 'COMPOSITION' } });
      const bp = web.body.tree.children.find((c: any) => c.id === 'blood_pressure');
      expect(bp).toMatchObject({ rmType: 'OBSERVATION', nodeId: 'openEHR-EHR-OBSERVATION.blood_pressure.v2', min: 1 });
      expect(bp.children.find((c: any) => c.id === 'any_event').children.find((c: any) => c.id === 'systolic')).toMatchObject({
        rmType: 'DV_QUANTITY',
        aqlPath: '/content[openEHR-EHR-OBSERVATION.blood_pressure.v2]/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value',
      });
      const xml = await api('POST', '/definition/template/adl1.4', { rawBody: '<template/>', headers: { 'content-type': 'application/xml' } });
      expect(xml.status).toBe(400);
      expect((await api('GET', '/definition/template/adl1.4/missing.v1')).status).toBe(404);
      const nurse = await t.token({ roles: ['nurse'] });
      expect((await api('POST', '/definition/template/adl1.4', { body: { ...weight, template_id: 'weight.v2' }, token: nurse })).status).toBe(403);
    });
  });

  describe('AQL', () => {
    let uid: string;
    beforeAll(async () => {
      const bp = (systolic: number, at: string) => ({
        ...VITALS,
        blood_pressure: { ...VITALS.blood_pressure, systolic: { magnitude: systolic, unit: 'mm[Hg]' } },
        recorded_at: at,
      });
      const res = await api('POST', '/ehr/ehr-p-1002/composition', { body: envelope(bp(151, '2026-11-20T08:00:00Z')), headers: representation });
      uid = res.body.uid.value;
      await api('POST', '/ehr/ehr-p-1002/composition', { body: envelope(bp(118, '2026-11-21T08:00:00Z')) });
    });

    const aql = (q: string, query_parameters?: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      api('POST', '/query/aql', { body: { q, query_parameters, ...extra } });

    it('[EHR-011] selects paths FROM EHR CONTAINS COMPOSITION CONTAINS OBSERVATION with parameters, WHERE, ORDER BY and LIMIT', async () => {
      const q = `SELECT e/ehr_id/value, c/uid/value AS uid, c/context/start_time/value AS time, o/systolic/magnitude AS systolic, o/systolic/unit
        FROM EHR e[ehr_id/value=$ehrId] CONTAINS COMPOSITION c[vital_signs.v1] CONTAINS OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2]
        WHERE o/systolic/magnitude >= $min AND (c/context/start_time/value > '2026-11-01T00:00:00Z' OR c/name/value = 'x')
        ORDER BY o/systolic/magnitude DESC LIMIT 10`;
      const res = await aql(q, { ehrId: 'ehr-p-1002', min: 140 });
      expect(res.status).toBe(200);
      expect(res.body.q).toBe(q);
      expect(res.body.columns).toEqual([
        { name: '#0', path: 'e/ehr_id/value' },
        { name: 'uid', path: 'c/uid/value' },
        { name: 'time', path: 'c/context/start_time/value' },
        { name: 'systolic', path: 'o/systolic/magnitude' },
        { name: '#4', path: 'o/systolic/unit' },
      ]);
      expect(res.body.rows).toEqual([['ehr-p-1002', uid, '2026-11-20T08:00:00Z', 151, 'mm[Hg]']]);
    });

    it('orders, pages (LIMIT/OFFSET and fetch/offset) and reads content paths and archetype-predicated paths', async () => {
      const q = `SELECT c/content/blood_pressure/systolic/magnitude, c/content[openEHR-EHR-OBSERVATION.pulse.v2]/rate/magnitude FROM EHR e CONTAINS COMPOSITION c
        WHERE e/ehr_id/value = 'ehr-p-1002' AND c/archetype_details/template_id/value = 'vital_signs.v1' ORDER BY c/context/start_time/value ASC`;
      const all = await aql(q);
      expect(all.body.rows.map((r: unknown[]) => r[0])).toEqual(expect.arrayContaining([151, 118]));
      expect(all.body.rows[0][1]).toBe(72);
      const ordered = all.body.rows.map((r: unknown[]) => r[0]);
      const paged = await aql(`${q} LIMIT 1 OFFSET 1`);
      expect(paged.body.rows).toEqual([all.body.rows[1]]);
      const fetched = await aql(q, undefined, { offset: 1, fetch: 1 });
      expect(fetched.body.rows.map((r: unknown[]) => r[0])).toEqual([ordered[1]]);
      const get = await api(
        'GET',
        `/query/aql?q=${encodeURIComponent('SELECT c/uid/value FROM EHR e[ehr_id/value=$ehr_id] CONTAINS COMPOSITION c WHERE c/uid/value = $uid')}&ehr_id=ehr-p-1002&uid=${encodeURIComponent(uid)}`,
      );
      expect(get.status).toBe(200);
      expect(get.body.rows).toEqual([[uid]]);
    });

    it('[EHR-011] VERSION[ALL_VERSIONS] binds every version with its commit_audit and lifecycle_state; a version predicate chooses some; other classes see the latest', async () => {
      const ehr = (await api('POST', '/ehr', { headers: representation })).body.ehr_id.value;
      const bp = (systolic: number) => envelope({ ...VITALS, blood_pressure: { ...VITALS.blood_pressure, systolic: { magnitude: systolic, unit: 'mm[Hg]' } } });
      const v1 = (await api('POST', `/ehr/${ehr}/composition`, { body: bp(130), headers: representation })).body.uid.value as string;
      const id = v1.split('::')[0];
      const put = (systolic: number, ifMatch: string, headers: Record<string, string>) =>
        api('PUT', `/ehr/${ehr}/composition/${id}`, { body: bp(systolic), headers: { ...representation, 'if-match': `"${ifMatch}"`, ...headers } });
      const v2 = (await put(145, v1, { 'openehr-audit-details': 'description.value="raised"' })).body.uid.value as string;
      const v3 = (await put(160, v2, { 'openehr-version': 'lifecycle_state.code_string="553"' })).body.uid.value as string;
      const SYS = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude';
      const BP = 'OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2]';
      const rows = async (q: string) => {
        const res = await aql(q, { ehr });
        expect(res.status).toBe(200);
        return res.body.rows;
      };
      const every = `FROM EHR e[ehr_id/value=$ehr] CONTAINS VERSION v[ALL_VERSIONS] CONTAINS COMPOSITION c CONTAINS ${BP}`;
      expect(
        await rows(
          `SELECT c/uid/value, v/commit_audit/change_type/value, v/commit_audit/description/value, v/lifecycle_state/defining_code/code_string, ${SYS} ${every} ORDER BY c/uid/value`,
        ),
      ).toEqual([
        [v1, 'creation', null, '532', 130],
        [v2, 'modification', 'raised', '532', 145],
        [v3, 'modification', null, '553', 160],
      ]);
      // A value only an earlier version holds is found (the clinical index, which holds the latest, narrows nothing here).
      expect(await rows(`SELECT c/uid/value ${every} WHERE ${SYS} < 135`)).toEqual([[v1]]);
      expect(await rows(`SELECT c/uid/value ${every} WHERE v/lifecycle_state/defining_code/code_string = '553'`)).toEqual([[v3]]);
      // A version predicate: the modifications only.
      expect(
        await rows(
          `SELECT c/uid/value FROM EHR e[ehr_id/value=$ehr] CONTAINS VERSION v[commit_audit/change_type/defining_code/code_string='251'] CONTAINS COMPOSITION c ORDER BY c/uid/value`,
        ),
      ).toEqual([[v2], [v3]]);
      // The latest version only, as before: LATEST_VERSION, a bare VERSION, and no VERSION at all.
      for (const from of ['VERSION v[LATEST_VERSION] CONTAINS COMPOSITION c', 'VERSION v CONTAINS COMPOSITION c', 'COMPOSITION c'])
        expect(await rows(`SELECT c/uid/value, ${SYS} FROM EHR e[ehr_id/value=$ehr] CONTAINS ${from} CONTAINS ${BP}`)).toEqual([[v3, 160]]);
      expect(await rows(`SELECT c/uid/value FROM EHR e[ehr_id/value=$ehr] CONTAINS COMPOSITION c CONTAINS ${BP} WHERE ${SYS} < 135`)).toEqual([]);
    });

    it("stays in the caller's tenant", async () => {
      const res = await api('POST', '/query/aql', { body: { q: 'SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c' }, token: acme });
      expect(res.status).toBe(200);
      expect(res.body.rows).toEqual([]);
    });

    it.each([
      ['SELECT p FROM EHR e CONTAINS PERSON p', 'FROM PERSON'],
      ['SELECT UPPER(c/uid/value) FROM EHR e CONTAINS COMPOSITION c', 'function UPPER()'],
      ['SELECT TOP 5 c/uid/value FROM EHR e CONTAINS COMPOSITION c LIMIT 2', 'TOP and LIMIT'],
    ])('answers 400 naming the unsupported construct: %s', async (q, construct) => {
      const res = await aql(q);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(construct);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    });

    it('answers 400 for syntax errors, unknown variables and missing parameters', async () => {
      expect((await aql('SELECT FROM')).status).toBe(400);
      expect((await aql('SELECT x/uid/value FROM EHR e CONTAINS COMPOSITION c')).body.message).toContain("'x'");
      expect((await aql('SELECT c/uid/value FROM EHR e[ehr_id/value=$ehr] CONTAINS COMPOSITION c')).body.message).toContain('$ehr');
      expect((await api('POST', '/query/aql', { body: {} })).status).toBe(400);
    });
  });

  it('answers 406 for a template or example asked for in a type it is not served in', async () => {
    for (const path of ['/definition/template/adl1.4/vital_signs.v1', '/definition/template/adl1.4/lab_result.v1/example']) {
      const res = await checked('GET', path, { headers: { accept: 'text/csv' } });
      expect({ path, status: res.status }).toEqual({ path, status: 406 });
      expect(res.body).toMatchObject({ message: expect.stringContaining('text/csv'), error: { code: 'NOT_ACCEPTABLE' } });
    }
    expect((await checked('GET', '/definition/template/adl1.4/vital_signs.v1', { headers: { accept: 'application/xml' } })).status).toBe(200);
    // (vital_signs.v1's example holds a DV_PROPORTION, whose `type` the OAS names otherwise: docs/exchange.md.)
    expect((await checked('GET', '/definition/template/adl1.4/lab_result.v1/example', { headers: { accept: '*/*' } })).status).toBe(200);
  });

  it('answers 501 in the openEHR error shape for parts of the API it does not implement, 401 without a token', async () => {
    const res = await api('GET', '/definition/template/adl2');
    expect(res.status).toBe(501);
    expect(res.body).toMatchObject({ message: expect.any(String), error: { code: 'NOT_IMPLEMENTED' } });
    const anonymous = await api('GET', '/ehr/ehr-p-1001', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('UNAUTHENTICATED');
  });
});
