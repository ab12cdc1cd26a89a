import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { compositionSchemaErrors } from './support/openehr-xsd';
import { ENCOUNTER, NOTE, ORDER, VITALS } from './ehr-fixtures';

/**
 * Canonical XML compositions over /openehr/v1 (`Accept` / `Content-Type:
 * application/xml`), with EHRbase's canonical compositions and OPTs vendored
 * under test/fixtures/openehr; every XML answer is validated against the
 * published openEHR RM schema with xmllint.
 */
const FIXTURES = join(__dirname, 'fixtures/openehr/ehrbase-sdk');
const read = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');
const FIXTURE_SETS = [
  {
    id: 'ehrbase_multi_occurrence.de.v1',
    opt: read('operationaltemplate/ehrbase_multi_occurrence.de.opt'),
    canonical: JSON.parse(read('composition/canonical_json/multi_occurrence.json')),
  },
  {
    id: 'AlternativeEvents',
    opt: read('operationaltemplate/AlternativeEvents.opt'),
    canonical: JSON.parse(read('composition/canonical_json/alternative_events.json')),
  },
];
const xml = { 'content-type': 'application/xml' };
const acceptXml = { accept: 'application/xml' };
/** A composition without its version uid, which the server assigns per commit. */
const withoutUid = ({ uid: _uid, ...rest }: Record<string, unknown>) => rest;
const xmlWithoutUid = (document: string) => document.replace(/<uid xsi:type="OBJECT_VERSION_ID"><value>[^<]*<\/value><\/uid>/, '');

describe(`openEHR canonical XML compositions (${backendName})`, () => {
  let t: TestPlatform;
  const api = (method: string, path: string, options: Parameters<TestPlatform['request']>[2] = {}) => t.request(method, `/openehr/v1${path}`, options);
  const uidOf = (res: { headers: Headers }) => res.headers.get('etag')!.replace(/"/g, '');

  beforeAll(async () => {
    t = await startTestPlatform();
    for (const f of FIXTURE_SETS) expect((await api('POST', '/definition/template/adl1.4', { rawBody: f.opt, headers: xml })).status).toBe(201);
  });
  afterAll(() => t?.stop());

  describe.each(FIXTURE_SETS)('$id', (f) => {
    let fromJson: { uid: string; json: Record<string, unknown>; xml: string };

    beforeAll(async () => {
      const created = await api('POST', '/ehr/ehr-p-1001/composition', { body: f.canonical });
      expect(created.status).toBe(201);
      const uid = uidOf(created);
      const json = (await api('GET', `/ehr/ehr-p-1001/composition/${uid}`)).body;
      const asXml = await api('GET', `/ehr/ehr-p-1001/composition/${uid}`, { headers: acceptXml });
      fromJson = { uid, json, xml: asXml.text };
    });

    it('[XCH-008] answers Accept: application/xml with canonical XML the published RM schema validates', async () => {
      const res = await api('GET', `/ehr/ehr-p-1001/composition/${fromJson.uid.split('::')[0]}`, { headers: acceptXml });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
      expect(res.headers.get('etag')).toBe(`"${fromJson.uid}"`);
      expect(compositionSchemaErrors(res.text)).toBe('');
      expect(res.text).toContain(`<uid xsi:type="OBJECT_VERSION_ID"><value>${fromJson.uid}</value></uid>`);
      expect(res.text).toContain(`<template_id><value>${f.id}</value></template_id>`);
      // JSON stays the default.
      const plain = await api('GET', `/ehr/ehr-p-1001/composition/${fromJson.uid}`, { headers: { accept: '*/*' } });
      expect(plain.headers.get('content-type')).toBe('application/json');
    });

    it('[XCH-008] stores a composition posted as XML and reads it back as the same canonical JSON', async () => {
      const posted = await api('POST', '/ehr/ehr-p-1001/composition', { rawBody: fromJson.xml, headers: xml });
      expect(posted.status).toBe(201);
      const uid = uidOf(posted);
      expect(uid).not.toBe(fromJson.uid);
      const json = (await api('GET', `/ehr/ehr-p-1001/composition/${uid}`)).body;
      expect(withoutUid(json)).toEqual(withoutUid(fromJson.json));
      expect(json.content).toEqual(f.canonical.content);
    });

    it('reads a composition posted as JSON back as the XML of the same composition posted as XML (vice versa), text/xml too', async () => {
      const posted = await api('POST', '/ehr/ehr-p-1001/composition', {
        rawBody: fromJson.xml,
        headers: { 'content-type': 'text/xml', prefer: 'return=representation' },
      });
      expect(posted.status).toBe(201);
      expect(posted.headers.get('content-type')).toMatch(/^application\/xml/);
      expect(compositionSchemaErrors(posted.text)).toBe('');
      expect(xmlWithoutUid(posted.text)).toBe(xmlWithoutUid(fromJson.xml));
    });

    it('updates with an XML body (PUT, If-Match)', async () => {
      const versioned = fromJson.uid.split('::')[0];
      const changed = fromJson.xml.replace(
        /<composer xsi:type="PARTY_IDENTIFIED"><name>[^<]*<\/name>/,
        '<composer xsi:type="PARTY_IDENTIFIED"><name>Dr XML</name>',
      );
      expect(changed).not.toBe(fromJson.xml);
      const updated = await api('PUT', `/ehr/ehr-p-1001/composition/${versioned}`, { rawBody: changed, headers: { ...xml, 'if-match': `"${fromJson.uid}"` } });
      expect(updated.status).toBe(204);
      expect(uidOf(updated)).toBe(fromJson.uid.replace(/::1$/, '::2'));
      const json = (await api('GET', `/ehr/ehr-p-1001/composition/${versioned}`)).body;
      expect(json.composer).toEqual({ _type: 'PARTY_IDENTIFIED', name: 'Dr XML' });
      expect(json.content).toEqual(f.canonical.content);
    });
  });

  it('refuses XML that is not a canonical RM composition with 400, and stores nothing', async () => {
    const count = async () => (await t.request('GET', '/api/ehr/patients/p-1001/compositions?limit=1')).body.pagination.total;
    const before = await count();
    const created = await api('POST', '/ehr/ehr-p-1001/composition', { body: FIXTURE_SETS[0].canonical });
    const good = (await api('GET', `/ehr/ehr-p-1001/composition/${uidOf(created)}`, { headers: acceptXml })).text;
    for (const bad of [
      '<composition xmlns="http://schemas.openehr.org/v2"',
      good.replace('<language>', '<colour>red</colour><language>'),
      good.replace(/<magnitude>[^<]*<\/magnitude>/, '<magnitude>warm</magnitude>'),
      good.replace(/^<\?xml[^>]*>/, '<!DOCTYPE composition [<!ENTITY a "b">]>'),
      '<folder xmlns="http://schemas.openehr.org/v2"/>',
    ]) {
      const res = await api('POST', '/ehr/ehr-p-1001/composition', { rawBody: bad, headers: xml });
      expect({ bad: bad.slice(0, 60), status: res.status }).toEqual({ bad: bad.slice(0, 60), status: 400 });
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await api('POST', '/ehr/ehr-p-1001/composition', { rawBody: '', headers: xml })).status).not.toBe(201);
    expect((await api('POST', '/ehr/ehr-p-1001/composition?format=FLAT', { rawBody: good, headers: xml })).status).toBe(400);
    expect(await count()).toBe(before + 1);
  });

  it('answers XML only for compositions of operational templates (400 for a CareGraph JSON template)', async () => {
    const weight = { type: 'object', children: { weight: { type: 'quantity', required: true, units: [{ unit: 'kg', min: 0, max: 500 }] } } };
    const up = await api('POST', '/definition/template/adl1.4', {
      body: { template_id: 'xml_weight.v1', name: 'Weight', area: 'observation', definition: weight },
    });
    expect(up.status).toBe(201);
    const created = await api('POST', '/ehr/ehr-p-1001/composition', {
      body: { _type: 'COMPOSITION', archetype_details: { template_id: { value: 'xml_weight.v1' } }, content: { weight: { magnitude: 71.5, unit: 'kg' } } },
    });
    expect(created.status).toBe(201);
    const res = await api('GET', `/ehr/ehr-p-1001/composition/${uidOf(created)}`, { headers: acceptXml });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('operational template');
  });

  it('answers a demo OPT composition posted in its simple form as canonical XML', async () => {
    const created = await api('POST', '/ehr/ehr-p-1001/composition', {
      body: { _type: 'COMPOSITION', archetype_details: { template_id: { value: 'vital_signs.v1' } }, content: VITALS },
    });
    expect(created.status).toBe(201);
    const res = await api('GET', `/ehr/ehr-p-1001/composition/${uidOf(created)}`, { headers: acceptXml });
    expect(res.status).toBe(200);
    // The event of a simple-form composition is a concrete POINT_EVENT (EVENT is abstract).
    expect(res.text).toContain('xsi:type="POINT_EVENT"');
    // HISTORY.origin is mandatory in the RM: the earliest event time, filled in when the form does not give it.
    expect(res.text).toMatch(/<origin>\s*<value>[^<]+<\/value>\s*<\/origin>/);
    expect(compositionSchemaErrors(res.text)).toBe('');
  });

  it('answers an encounter posted in its simple form as canonical XML that meets the RM schema', async () => {
    const content = {
      encounter: { ...ENCOUNTER.encounter, end: '2026-11-22T10:00:00Z', practitioner: 'Dr. Jones', reason: 'Follow-up', appointment_id: 'apt-42' },
    };
    const created = await api('POST', '/ehr/ehr-p-1001/composition', {
      body: { _type: 'COMPOSITION', archetype_details: { template_id: { value: 'encounter.v1' } }, content },
    });
    expect(created.status).toBe(201);
    const res = await api('GET', `/ehr/ehr-p-1001/composition/${uidOf(created)}`, { headers: acceptXml });
    expect(res.status).toBe(200);
    expect(res.text).toContain('<participations><function><value>performer</value></function>');
    expect(compositionSchemaErrors(res.text)).toBe('');
  });

  it('answers a medication order posted in its simple form as canonical XML that meets the RM schema', async () => {
    const created = await api('POST', '/ehr/ehr-p-1001/composition', {
      body: { _type: 'COMPOSITION', archetype_details: { template_id: { value: 'medication_order.v1' } }, content: ORDER },
    });
    expect(created.status).toBe(201);
    const res = await api('GET', `/ehr/ehr-p-1001/composition/${uidOf(created)}`, { headers: acceptXml });
    expect(res.status).toBe(200);
    // ACTIVITY.action_archetype_id is mandatory in the RM: filled in as any ACTION archetype.
    expect(res.text).toMatch(/<action_archetype_id>\/\.\*\/<\/action_archetype_id>/);
    expect(compositionSchemaErrors(res.text)).toBe('');
  });

  it('answers a clinical note posted in its simple form as canonical XML that meets the RM schema', async () => {
    const created = await api('POST', '/ehr/ehr-p-1001/composition', {
      body: { _type: 'COMPOSITION', archetype_details: { template_id: { value: 'clinical_note.v1' } }, content: NOTE('Feels well; BP < 130 & stable.') },
    });
    expect(created.status).toBe(201);
    const res = await api('GET', `/ehr/ehr-p-1001/composition/${uidOf(created)}`, { headers: acceptXml });
    expect(res.status).toBe(200);
    expect(res.text).toContain('<code_string>11506-3</code_string>');
    expect(res.text).toContain('Feels well; BP &lt; 130 &amp; stable.');
    expect(compositionSchemaErrors(res.text)).toBe('');
  });
});
