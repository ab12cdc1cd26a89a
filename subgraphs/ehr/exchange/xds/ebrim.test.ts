import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readEnvelope, readSoapMessage } from '../../../../common/soap';
import { parseCx, queryValues, readProvideAndRegister, readStoredQuery, registryResponseXml, XDS } from './ebrim';

const fixture = readFileSync(join(__dirname, '../../../../test/fixtures/xds/iti41-provide-and-register.xml'), 'utf8');

describe('ebXML payloads of the XDS.b transactions', () => {
  it('reads an ITI-41 request: objects, classifications, external ids, associations and the inline document', () => {
    const xml = fixture.replace(/\{\{PATIENT_ID\}\}/g, 'p-1^^^&amp;2.999.1.1&amp;ISO').replace('{{DOCUMENT}}', Buffer.from('héllo').toString('base64'));
    const { submit, documents } = readProvideAndRegister(readEnvelope(xml).payload);
    expect(documents).toEqual([{ id: 'Document01', content: Buffer.from('héllo') }]);
    expect(submit.extrinsicObjects).toHaveLength(1);
    const entry = submit.extrinsicObjects[0];
    expect(entry.objectType).toBe(XDS.stableDocument);
    expect(entry.externalIds.find((e) => e.scheme === XDS.doc.patientId)?.value).toBe('p-1^^^&2.999.1.1&ISO');
    expect(entry.slots.find((s) => s.name === 'sourcePatientInfo')?.values).toHaveLength(4);
    expect(submit.classifications).toEqual([expect.objectContaining({ node: XDS.submissionSetNode, classifiedObject: 'SubmissionSet01' })]);
    expect(submit.associations).toEqual([expect.objectContaining({ type: XDS.hasMember, source: 'SubmissionSet01', target: 'Document01' })]);
  });

  it('resolves XOP includes of an MTOM message into inline base64', () => {
    const root = fixture.replace('{{DOCUMENT}}', '<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:a%40b"/>');
    const body = Buffer.concat([
      Buffer.from(
        `--B\r\nContent-Type: application/xop+xml; type="application/soap+xml"\r\nContent-ID: <r@b>\r\n\r\n${root}\r\n--B\r\nContent-ID: <a@b>\r\n\r\n`,
      ),
      Buffer.from([0, 255, 13, 10]),
      Buffer.from('\r\n--B--\r\n'),
    ]);
    const { envelope, mtom } = readSoapMessage('multipart/related; boundary=B; start="<r@b>"; type="application/xop+xml"', body);
    expect(mtom).toBe(true);
    expect(envelope).toContain(`<xdsb:Document id="Document01">${Buffer.from([0, 255, 13, 10]).toString('base64')}</xdsb:Document>`);
  });

  it('reads stored query values: quoted strings, lists, escaped quotes', () => {
    expect(queryValues("('a','b c', 'it''s')")).toEqual(['a', 'b c', "it's"]);
    expect(queryValues("'x^^1.2'")).toEqual(['x^^1.2']);
    expect(queryValues('20041224')).toEqual(['20041224']);
    const request = readStoredQuery(
      '<AdhocQueryRequest><ResponseOption returnType="LeafClass"/><AdhocQuery id="q"><Slot name="$p"><ValueList><Value>(\'a\')</Value><Value>(\'b\',\'c\')</Value></ValueList></Slot></AdhocQuery></AdhocQueryRequest>',
    );
    expect(request.params.get('$p')).toEqual([['a'], ['b', 'c']]);
  });

  it('reads CX patient ids and writes RegistryResponses', () => {
    expect(parseCx('p-1001^^^&2.999.1.1&ISO')).toEqual({ id: 'p-1001', authority: '2.999.1.1' });
    expect(parseCx('p-1001')).toBeUndefined();
    expect(registryResponseXml([])).toContain(`status="${XDS.response.success}"`);
    expect(registryResponseXml([{ errorCode: 'XDSUnknownPatientId', codeContext: 'x' }])).toContain('errorCode="XDSUnknownPatientId"');
  });
});
