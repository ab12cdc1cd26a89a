import { createHash } from 'node:crypto';
import { codes, externalId, slotValue, XDS } from '../xds/ebrim';
import { entryUuid, fhirId, readProvideBundle, xdsSchemes } from './mhd.mapping';

const bytes = Buffer.from('hello');
const bundle = (binaryFirst = false) => {
  const entries = [
    {
      fullUrl: 'urn:uuid:l',
      request: { method: 'POST' },
      resource: {
        resourceType: 'List',
        extension: [{ url: 'https://profiles.ihe.net/ITI/MHD/StructureDefinition/ihe-sourceId', valueIdentifier: { value: 'urn:oid:1.2.9' } }],
        identifier: [{ use: 'usual', value: 'urn:oid:1.2.3' }],
        code: { coding: [{ system: 'https://profiles.ihe.net/ITI/MHD/CodeSystem/MHDlistTypes', code: 'submissionset' }] },
        subject: { reference: 'https://example.org/fhir/R4/Patient/p-1' },
        date: '2026-11-20T11:20:00+01:00',
        entry: [{ item: { reference: 'urn:uuid:d' } }],
      },
    },
    {
      fullUrl: 'urn:uuid:d',
      request: { method: 'POST' },
      resource: {
        resourceType: 'DocumentReference',
        masterIdentifier: { value: 'urn:oid:1.2.4' },
        type: { coding: [{ system: 'http://loinc.org', code: '34133-9' }] },
        securityLabel: [{ coding: [{ system: 'urn:oid:9.9', code: 'N' }] }],
        subject: { reference: 'Patient/p-1' },
        content: [
          { attachment: { contentType: 'text/plain', url: 'urn:uuid:b', hash: createHash('sha1').update(bytes).digest('base64'), creation: '2026-11-20' } },
        ],
      },
    },
    { fullUrl: 'urn:uuid:b', request: { method: 'POST' }, resource: { resourceType: 'Binary', contentType: 'text/plain', data: bytes.toString('base64') } },
  ];
  return { resourceType: 'Bundle', type: 'transaction', entry: binaryFirst ? [entries[2], entries[0], entries[1]] : entries };
};

describe('MHD ITI-65 Bundle → XDS submission', () => {
  it('reads the List, DocumentReference and Binary into ebRIM objects in XDS units (OIDs, hex SHA-1, UTC DTM, CX)', () => {
    const { submit, documents, entries } = readProvideBundle(bundle(), '2.999.1.1');
    const [set] = submit.registryPackages;
    expect(externalId(set, XDS.set.patientId)).toBe('p-1^^^&2.999.1.1&ISO');
    expect(externalId(set, XDS.set.uniqueId)).toBe('1.2.3');
    expect(externalId(set, XDS.set.sourceId)).toBe('1.2.9');
    expect(slotValue(set, 'submissionTime')).toBe('20261120102000');
    const [doc] = submit.extrinsicObjects;
    expect(externalId(doc, XDS.doc.uniqueId)).toBe('1.2.4');
    expect(slotValue(doc, 'hash')).toBe(createHash('sha1').update(bytes).digest('hex'));
    expect(slotValue(doc, 'creationTime')).toBe('20261120');
    expect(codes(doc, XDS.doc.typeCode)).toEqual([{ code: '34133-9', scheme: '2.16.840.1.113883.6.1' }]);
    expect(codes(doc, XDS.doc.confidentialityCode)).toEqual([{ code: 'N', scheme: '9.9' }]);
    expect(documents).toEqual([{ id: doc.id, content: bytes }]);
    expect(submit.associations).toMatchObject([{ type: XDS.hasMember, source: set.id, target: doc.id }]);
    expect(entries).toEqual([
      { resourceType: 'List', submittedId: set.id },
      { resourceType: 'DocumentReference', submittedId: doc.id },
      { resourceType: 'Binary', submittedId: doc.id },
    ]);
  });

  it('takes the entries in any order, and refuses a Binary no DocumentReference names', () => {
    expect(readProvideBundle(bundle(true), '2.999.1.1').entries.map((e) => e.resourceType)).toEqual(['Binary', 'List', 'DocumentReference']);
    const orphan = bundle();
    orphan.entry.push({ fullUrl: 'urn:uuid:x', request: { method: 'POST' }, resource: { resourceType: 'Binary', contentType: 'text/plain', data: '' } });
    expect(() => readProvideBundle(orphan, '2.999.1.1')).toThrow(/Binary no DocumentReference names/);
    expect(() => readProvideBundle({ ...bundle(), type: 'batch' }, '2.999.1.1')).toThrow(/transaction/);
  });

  it('gives registry entries FHIR ids apart from composition ids, and back', () => {
    const uuid = 'urn:uuid:0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(fhirId(uuid)).toBe('xds-0f8fad5b-d9cb-469f-a165-70867728950e');
    expect(entryUuid(fhirId(uuid))).toBe(uuid);
    expect(entryUuid('0f8fad5b-d9cb-469f-a165-70867728950e')).toBeUndefined();
  });

  it('finds every XDS scheme a FHIR system stands for (what a token search on a coded column compares)', () => {
    expect(xdsSchemes('http://loinc.org')).toEqual(['http://loinc.org', '2.16.840.1.113883.6.1']);
    expect(xdsSchemes('urn:oid:1.2.3')).toEqual(['urn:oid:1.2.3', '1.2.3']);
    // LOINC's OID is shown as http://loinc.org, never as urn:oid; a bare OID is never a FHIR system here.
    expect(xdsSchemes('urn:oid:2.16.840.1.113883.6.1')).toEqual(['urn:oid:2.16.840.1.113883.6.1']);
    expect(xdsSchemes('1.2.3')).toEqual([]);
  });
});
