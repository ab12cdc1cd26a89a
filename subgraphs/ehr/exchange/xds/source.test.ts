import { createHash } from 'node:crypto';
import { faultEnvelope, mtomMessage, readEnvelope, readFault, readSoapMessage, requestEnvelope } from '../../../../common/soap';
import { codes, externalId, provideAndRegisterXml, readProvideAndRegister, readRegistryResponse, registryResponseXml, slotValue, XDS } from './ebrim';
import { ccdSubmission, dtm, uuidOid } from './source';

describe('XDS.b Document Source metadata (ITI-41 as CareGraph sends it)', () => {
  it('turns a UUID into its 2.25 OID (the example of ITU-T X.667 §6.3)', () => {
    expect(uuidOid('f81d4fae-7dec-11d0-a765-00a0c91e6bf6')).toBe('2.25.329800735698586629295641978511506172918');
    expect(dtm(new Date('2026-11-23T10:15:00.123Z'))).toBe('20261123101500');
  });

  it('writes a ProvideAndRegisterDocumentSetRequest that reads back with every attribute the registry requires, sent as MTOM', () => {
    const content = Buffer.from('<ClinicalDocument>héllo</ClinicalDocument>');
    const s = ccdSubmission({
      patientCx: 'p-1^^^&2.999.1.1&ISO',
      documentId: 'F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6',
      submissionSetId: '00000000-0000-4000-8000-000000000001',
      sourceId: '2.999.1.3',
      author: 'dr^x',
      institution: 'demo',
      content,
      at: new Date('2026-11-23T10:15:00Z'),
    });
    expect(s).toMatchObject({
      hash: createHash('sha1').update(content).digest('hex'),
      size: content.length,
      documentUniqueId: uuidOid('f81d4fae-7dec-11d0-a765-00a0c91e6bf6'),
    });

    // Through SOAP and MTOM and back, as the repository's gateway and ebrim reader see it.
    const message = mtomMessage(
      requestEnvelope('urn:ihe:iti:2007:ProvideAndRegisterDocumentSet-b', 'http://x/xds/repository', provideAndRegisterXml(s.submit, s.documents)).xml,
      'xdsb:Document',
    );
    expect(message.body.includes(content)).toBe(true);
    const received = readSoapMessage(message.contentType, message.body);
    expect(received.mtom).toBe(true);
    const { action, payload } = readEnvelope(received.envelope);
    expect(action).toBe('urn:ihe:iti:2007:ProvideAndRegisterDocumentSet-b');
    const { submit, documents } = readProvideAndRegister(payload);
    expect(documents).toEqual([{ id: 'Document01', content }]);
    const [entry] = submit.extrinsicObjects;
    expect({
      objectType: entry.objectType,
      mimeType: entry.mimeType,
      patient: externalId(entry, XDS.doc.patientId),
      uniqueId: externalId(entry, XDS.doc.uniqueId),
      creationTime: slotValue(entry, 'creationTime'),
      languageCode: slotValue(entry, 'languageCode'),
      hash: slotValue(entry, 'hash'),
      size: slotValue(entry, 'size'),
      classCode: codes(entry, XDS.doc.classCode),
      formatCode: codes(entry, XDS.doc.formatCode)[0].code,
      confidentialityCode: codes(entry, XDS.doc.confidentialityCode)[0].code,
      author: entry.classifications.find((c) => c.scheme === XDS.doc.author)?.slots,
    }).toEqual({
      objectType: XDS.stableDocument,
      mimeType: 'text/xml',
      patient: 'p-1^^^&2.999.1.1&ISO',
      uniqueId: s.documentUniqueId,
      creationTime: '20261123101500',
      languageCode: 'en-US',
      hash: s.hash,
      size: String(content.length),
      classCode: [{ code: '34133-9', scheme: '2.16.840.1.113883.6.1', display: 'Summary of episode note' }],
      formatCode: 'urn:hl7-org:sdwg:ccda-structuredBody:2.1',
      confidentialityCode: 'N',
      // HL7 delimiters in a subject would break the XCN: replaced.
      author: [
        { name: 'authorPerson', values: ['dr_x'] },
        { name: 'authorInstitution', values: ['demo'] },
      ],
    });
    const [set] = submit.registryPackages;
    expect([externalId(set, XDS.set.sourceId), externalId(set, XDS.set.patientId), slotValue(set, 'submissionTime')]).toEqual([
      '2.999.1.3',
      'p-1^^^&2.999.1.1&ISO',
      '20261123101500',
    ]);
    expect(submit.classifications).toEqual([expect.objectContaining({ node: XDS.submissionSetNode, classifiedObject: set.id })]);
    expect(submit.associations).toEqual([expect.objectContaining({ type: XDS.hasMember, source: set.id, target: entry.id })]);
  });

  it('reads a RegistryResponse (Success, or Failure with its errors) and a SOAP fault', () => {
    expect(readRegistryResponse(registryResponseXml([]))).toEqual({ success: true, status: XDS.response.success, errors: [] });
    const failure = readRegistryResponse(registryResponseXml([{ errorCode: 'XDSUnknownPatientId', codeContext: 'unknown', location: 'x' }]));
    expect(failure).toEqual({
      success: false,
      status: XDS.response.failure,
      errors: [{ errorCode: 'XDSUnknownPatientId', codeContext: 'unknown', location: 'x' }],
    });
    const fault = readEnvelope(faultEnvelope('Sender', 'cg:UNAUTHENTICATED', 'A valid bearer token is required')).payload;
    expect(readFault(fault)).toEqual({ code: 'Sender', subcode: 'cg:UNAUTHENTICATED', reason: 'A valid bearer token is required' });
    expect(readFault(registryResponseXml([]))).toBeUndefined();
  });
});
