import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { readMultipart } from './support/multipart';
import { scrape } from './support/metrics';

const FIXTURES = join(__dirname, 'fixtures', 'xds');
const ITI41 = readFileSync(join(FIXTURES, 'iti41-provide-and-register.xml'), 'utf8');
const CCD = readFileSync(join(FIXTURES, 'ccd.xml'));
const AUTHORITY = '2.999.1.1';
const REPOSITORY = '2.999.1.2';
const pid = (id: string, authority = AUTHORITY) => `${id}^^^&${authority}&ISO`;
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const SUCCESS = 'urn:oasis:names:tc:ebxml-regrep:ResponseStatusType:Success';
const FAILURE = 'urn:oasis:names:tc:ebxml-regrep:ResponseStatusType:Failure';
const FIND_DOCUMENTS = 'urn:uuid:14d4debf-8f97-4251-9a74-a90016b0af0d';
const FIND_SUBMISSION_SETS = 'urn:uuid:f26abbcb-ac74-4422-8a30-edb644bbc1a9';
const GET_DOCUMENTS = 'urn:uuid:5c4f972b-d56b-40ac-a5fc-c8ca9b40b9d4';
const GET_ASSOCIATIONS = 'urn:uuid:a7ae438b-4bc2-4642-93e9-be891f7bb155';
const GET_SS_AND_CONTENTS = 'urn:uuid:e8e3cb2c-e39c-46b9-99e4-c12f57260b83';
const APPROVED = "('urn:oasis:names:tc:ebxml-regrep:StatusType:Approved')";
const uid = () => `2.999.7.${Date.now()}.${Math.floor(Math.random() * 1e6)}`;

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  isArray: (name) => ['ExtrinsicObject', 'RegistryPackage', 'Association', 'ObjectRef', 'RegistryError', 'DocumentResponse', 'Slot', 'Value'].includes(name),
});

interface Answer {
  status: number;
  contentType: string;
  /** The SOAP envelope (the MTOM root part for multipart answers). */
  envelope: string;
  /** The MTOM parts other than the root, by Content-ID. */
  parts: Map<string, Buffer>;
  body: any;
}

describe(`IHE XDS.b /xds (${backendName})`, () => {
  let t: TestPlatform;
  let acme: string;

  const post = async (endpoint: string, body: string | Buffer, contentType: string, token?: string | null): Promise<Answer> => {
    const headers: Record<string, string> = { 'content-type': contentType };
    const auth = token === undefined ? await t.token() : token;
    if (auth) headers.authorization = `Bearer ${auth}`;
    const res = await fetch(`${t.url}/xds/${endpoint}`, { method: 'POST', headers, body });
    const bytes = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get('content-type') ?? '';
    const { root, parts } = type.startsWith('multipart/related') ? readMultipart(type, bytes) : { root: bytes.toString('utf8'), parts: new Map() };
    return { status: res.status, contentType: type, envelope: root, parts, body: xml.parse(root).Envelope?.Body };
  };

  const soap = (action: string, payload: string) =>
    `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${SOAP12}" xmlns:a="http://www.w3.org/2005/08/addressing"><s:Header>` +
    `<a:Action s:mustUnderstand="true">${action}</a:Action><a:MessageID>urn:uuid:${randomUUID()}</a:MessageID></s:Header><s:Body>${payload}</s:Body></s:Envelope>`;

  /** The fixture's ITI-41 request with this patient, unique ids and document (inline base64 or an XOP include). */
  const iti41 = (options: { patient?: string; docUniqueId: string; setUniqueId?: string; document: string; edit?: (text: string) => string }) => {
    const text = ITI41.replace(/\{\{PATIENT_ID\}\}/g, (options.patient ?? pid('p-1001')).replace(/&/g, '&amp;'))
      .replace('{{DOC_UNIQUE_ID}}', options.docUniqueId)
      .replace('{{SET_UNIQUE_ID}}', options.setUniqueId ?? uid())
      .replace('{{DOCUMENT}}', options.document);
    return options.edit ? options.edit(text) : text;
  };

  /** ITI-41 as MTOM: the document travels as a binary part. */
  const provideMtom = (document: Buffer, options: { patient?: string; docUniqueId: string; setUniqueId?: string }, token?: string | null) => {
    const boundary = `MIMEBoundary_${randomUUID()}`;
    const root = iti41({
      ...options,
      document: '<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:doc1%40test.example"/>',
    });
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Type: application/xop+xml; charset=UTF-8; type="application/soap+xml"\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <0.root@test.example>\r\n\r\n${root}` +
          `\r\n--${boundary}\r\nContent-Type: text/xml\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <doc1@test.example>\r\n\r\n`,
      ),
      document,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    return post(
      'repository',
      body,
      `multipart/related; type="application/xop+xml"; boundary="${boundary}"; start="<0.root@test.example>"; start-info="application/soap+xml"`,
      token,
    );
  };
  const provideInline = (
    document: Buffer,
    options: { patient?: string; docUniqueId: string; setUniqueId?: string; edit?: (text: string) => string },
    token?: string | null,
  ) => post('repository', iti41({ ...options, document: document.toString('base64') }), 'application/soap+xml; charset=UTF-8', token);

  const query = (queryId: string, params: Record<string, string[]>, returnType: 'LeafClass' | 'ObjectRef' = 'LeafClass', token?: string | null) =>
    post(
      'registry',
      soap(
        'urn:ihe:iti:2007:RegistryStoredQuery',
        `<query:AdhocQueryRequest xmlns:query="urn:oasis:names:tc:ebxml-regrep:xsd:query:3.0" xmlns:rim="urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0">` +
          `<query:ResponseOption returnComposedObjects="true" returnType="${returnType}"/><rim:AdhocQuery id="${queryId}">` +
          Object.entries(params)
            .map(
              ([name, values]) =>
                `<rim:Slot name="${name}"><rim:ValueList>${values.map((v) => `<rim:Value>${v.replace(/&/g, '&amp;')}</rim:Value>`).join('')}</rim:ValueList></rim:Slot>`,
            )
            .join('') +
          `</rim:AdhocQuery></query:AdhocQueryRequest>`,
      ),
      'application/soap+xml; charset=UTF-8',
      token,
    );
  const findDocuments = (patient: string, extra: Record<string, string[]> = {}, returnType: 'LeafClass' | 'ObjectRef' = 'LeafClass', token?: string | null) =>
    query(FIND_DOCUMENTS, { $XDSDocumentEntryPatientId: [`'${patient}'`], $XDSDocumentEntryStatus: [APPROVED], ...extra }, returnType, token);

  const retrieve = (documents: Array<{ uniqueId: string; repository?: string }>, token?: string | null) =>
    post(
      'repository',
      soap(
        'urn:ihe:iti:2007:RetrieveDocumentSet',
        `<xdsb:RetrieveDocumentSetRequest xmlns:xdsb="urn:ihe:iti:xds-b:2007">` +
          documents
            .map(
              (d) =>
                `<xdsb:DocumentRequest><xdsb:RepositoryUniqueId>${d.repository ?? REPOSITORY}</xdsb:RepositoryUniqueId><xdsb:DocumentUniqueId>${d.uniqueId}</xdsb:DocumentUniqueId></xdsb:DocumentRequest>`,
            )
            .join('') +
          `</xdsb:RetrieveDocumentSetRequest>`,
      ),
      'application/soap+xml; charset=UTF-8',
      token,
    );

  const registryResponse = (a: Answer) => a.body.RegistryResponse ?? a.body.AdhocQueryResponse ?? a.body.RetrieveDocumentSetResponse?.RegistryResponse;
  const errorCodes = (a: Answer) => (registryResponse(a)?.RegistryErrorList?.RegistryError ?? []).map((e: any) => e['@errorCode']);
  const extrinsic = (a: Answer): any[] => a.body.AdhocQueryResponse.RegistryObjectList?.ExtrinsicObject ?? [];
  const slot = (object: any, name: string) => object.Slot.find((s: any) => s['@name'] === name)?.ValueList.Value;
  const uniqueIdOf = (object: any) =>
    [object.ExternalIdentifier].flat().find((e: any) => e['@identificationScheme'] === 'urn:uuid:2e82c1f6-a085-4c72-9da3-8640a32e42ab')['@value'];
  const audit = async (entityType: string) =>
    (await t.graphql(`{ auditRecords(entityType: "${entityType}", limit: 100) { data { actor action entityId after } } }`)).body.data.auditRecords
      .data as any[];

  beforeAll(async () => {
    t = await startTestPlatform();
    acme = await t.token({ tenants: ['acme'] });
  });
  afterAll(() => t?.stop());

  it('[XCH-010] stores an ITI-41 MTOM submission, finds it with ITI-18 FindDocuments and returns it byte-identical with ITI-43 over MTOM', async () => {
    const docUniqueId = uid();
    const stored = await provideMtom(CCD, { docUniqueId });
    expect(stored.status).toBe(200);
    expect(stored.contentType).toMatch(/^multipart\/related/);
    expect(registryResponse(stored)['@status']).toBe(SUCCESS);
    expect(stored.body).toBeDefined();
    expect(stored.envelope).toContain('urn:ihe:iti:2007:ProvideAndRegisterDocumentSet-bResponse');

    const found = await findDocuments(pid('p-1001'));
    expect(found.status).toBe(200);
    expect(registryResponse(found)['@status']).toBe(SUCCESS);
    const entry = extrinsic(found).find((o) => uniqueIdOf(o) === docUniqueId);
    expect(entry).toBeDefined();
    expect(entry['@id']).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(entry['@status']).toBe('urn:oasis:names:tc:ebxml-regrep:StatusType:Approved');
    expect(entry['@mimeType']).toBe('text/xml');
    expect(slot(entry, 'hash')).toEqual([createHash('sha1').update(CCD).digest('hex')]);
    expect(slot(entry, 'size')).toEqual([String(CCD.length)]);
    expect(slot(entry, 'repositoryUniqueId')).toEqual([REPOSITORY]);
    expect(slot(entry, 'sourcePatientInfo')).toContain('PID-5|Jansen^Anna^^^');
    const classCode = [entry.Classification].flat().find((c: any) => c['@classificationScheme'] === 'urn:uuid:41a5887f-8865-4c09-adf7-e362475b143a');
    expect(classCode['@nodeRepresentation']).toBe('34133-9');

    // ObjectRef answers ids only.
    const refs = await findDocuments(pid('p-1001'), {}, 'ObjectRef');
    expect(refs.body.AdhocQueryResponse.RegistryObjectList.ObjectRef.map((r: any) => r['@id'])).toContain(entry['@id']);

    // Coded filters: a class code it has, one it does not.
    expect(extrinsic(await findDocuments(pid('p-1001'), { $XDSDocumentEntryClassCode: ["('34133-9^^2.16.840.1.113883.6.1')"] })).map(uniqueIdOf)).toContain(
      docUniqueId,
    );
    expect(extrinsic(await findDocuments(pid('p-1001'), { $XDSDocumentEntryClassCode: ["('11488-4^^2.16.840.1.113883.6.1')"] }))).toHaveLength(0);

    const fetched = await retrieve([{ uniqueId: docUniqueId }]);
    expect(fetched.status).toBe(200);
    expect(fetched.contentType).toMatch(/^multipart\/related/);
    expect(fetched.contentType).toContain('application/xop+xml');
    const response = fetched.body.RetrieveDocumentSetResponse;
    expect(response.RegistryResponse['@status']).toBe(SUCCESS);
    const [document] = response.DocumentResponse;
    expect(document.DocumentUniqueId).toBe(docUniqueId);
    expect(document.RepositoryUniqueId).toBe(REPOSITORY);
    expect(document.mimeType).toBe('text/xml');
    const href = decodeURIComponent(document.Document.Include['@href'].replace(/^cid:/, ''));
    expect(fetched.parts.get(href)!.equals(CCD)).toBe(true);
  });

  it('takes ITI-41 with the document inline (base64) and answers the other stored queries', async () => {
    const docUniqueId = uid();
    const setUniqueId = uid();
    const bytes = Buffer.from([0, 1, 2, 255, 254, 13, 10, 45, 45]);
    const stored = await provideInline(bytes, { docUniqueId, setUniqueId, patient: pid('p-1002') });
    expect(stored.contentType).toMatch(/^application\/soap\+xml/);
    expect(registryResponse(stored)['@status']).toBe(SUCCESS);

    const sets = await query(FIND_SUBMISSION_SETS, { $XDSSubmissionSetPatientId: [`'${pid('p-1002')}'`], $XDSSubmissionSetStatus: [APPROVED] });
    const set = sets.body.AdhocQueryResponse.RegistryObjectList.RegistryPackage.find((p: any) =>
      [p.ExternalIdentifier].flat().some((e: any) => e['@value'] === setUniqueId),
    );
    expect(set).toBeDefined();

    const contents = await query(GET_SS_AND_CONTENTS, { $XDSSubmissionSetUniqueId: [`'${setUniqueId}'`] });
    const list = contents.body.AdhocQueryResponse.RegistryObjectList;
    expect(list.RegistryPackage).toHaveLength(1);
    expect(list.ExtrinsicObject.map(uniqueIdOf)).toEqual([docUniqueId]);
    expect(list.Association).toHaveLength(1);
    expect(list.Association[0]['@associationType']).toBe('urn:oasis:names:tc:ebxml-regrep:AssociationType:HasMember');
    expect(list.Association[0]['@sourceObject']).toBe(set['@id']);
    const entryUuid = list.ExtrinsicObject[0]['@id'];

    const byUuid = await query(GET_DOCUMENTS, { $XDSDocumentEntryEntryUUID: [`('${entryUuid}')`] });
    expect(extrinsic(byUuid).map(uniqueIdOf)).toEqual([docUniqueId]);
    const associations = await query(GET_ASSOCIATIONS, { $uuid: [`('${entryUuid}')`] });
    expect(associations.body.AdhocQueryResponse.RegistryObjectList.Association.map((a: any) => a['@targetObject'])).toEqual([entryUuid]);

    const fetched = await retrieve([{ uniqueId: docUniqueId }]);
    const [document] = fetched.body.RetrieveDocumentSetResponse.DocumentResponse;
    expect(fetched.parts.get(decodeURIComponent(document.Document.Include['@href'].slice(4)))!.equals(bytes)).toBe(true);

    // The document is encrypted at rest: its bytes are nowhere in the table.
    const { rows } = await t.platform.db!.query<{ contentEnc: string; metadataEnc: string }>(
      `SELECT "contentEnc", "metadataEnc" FROM ehr."XdsDocument" WHERE "uniqueId" = $1`,
      [docUniqueId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].contentEnc).not.toContain(bytes.toString('base64'));
    expect(rows[0].metadataEnc).not.toContain('Jansen');
  });

  it('[XCH-010] refuses an unknown patient id (XDSUnknownPatientId) and bad metadata, storing nothing', async () => {
    for (const patient of [pid('p-9999'), pid('p-1001', '1.2.3.4'), 'p-1001']) {
      const docUniqueId = uid();
      const answer = await provideInline(CCD, { docUniqueId, patient });
      expect(answer.status).toBe(200);
      expect(registryResponse(answer)['@status']).toBe(FAILURE);
      expect(errorCodes(answer)).toEqual(['XDSUnknownPatientId']);
      expect(extrinsic(await query(GET_DOCUMENTS, { $XDSDocumentEntryUniqueId: [`('${docUniqueId}')`] }))).toHaveLength(0);
    }
    expect(errorCodes(await findDocuments(pid('p-9999')))).toEqual(['XDSUnknownPatientId']);

    const noDocument = await provideInline(CCD, {
      docUniqueId: uid(),
      edit: (text) => text.replace(/<xdsb:Document id="Document01">[^<]*<\/xdsb:Document>/, ''),
    });
    expect(errorCodes(noDocument)).toEqual(['XDSMissingDocument']);
    const wrongHash = await provideInline(CCD, {
      docUniqueId: uid(),
      edit: (text) =>
        text.replace(
          '<rim:Slot name="languageCode">',
          `<rim:Slot name="hash"><rim:ValueList><rim:Value>${'0'.repeat(40)}</rim:Value></rim:ValueList></rim:Slot><rim:Slot name="languageCode">`,
        ),
    });
    expect(errorCodes(wrongHash)).toEqual(['XDSRepositoryMetadataError']);
    const noClassCode = await provideInline(CCD, {
      docUniqueId: uid(),
      edit: (text) => text.replace('urn:uuid:41a5887f-8865-4c09-adf7-e362475b143a', 'urn:uuid:00000000-0000-0000-0000-000000000000'),
    });
    expect(errorCodes(noClassCode)).toEqual(['XDSRegistryMetadataError']);

    const duplicate = uid();
    expect(registryResponse(await provideInline(CCD, { docUniqueId: duplicate }))['@status']).toBe(SUCCESS);
    expect(errorCodes(await provideInline(CCD, { docUniqueId: duplicate }))).toEqual(['XDSDuplicateUniqueIdInRegistry']);
    expect(errorCodes(await provideInline(Buffer.from('other'), { docUniqueId: duplicate }))).toEqual(['XDSNonIdenticalHash']);

    expect(errorCodes(await query('urn:uuid:10b545ea-725c-446d-9b95-8aeb444eddf3', {}))).toEqual(['XDSUnknownStoredQuery']);
    expect(errorCodes(await query(FIND_DOCUMENTS, { $XDSDocumentEntryPatientId: [`'${pid('p-1001')}'`] }))).toEqual(['XDSStoredQueryParamNumber']);
    expect(errorCodes(await retrieve([{ uniqueId: uid() }]))).toEqual(['XDSDocumentUniqueIdError']);
    expect(errorCodes(await retrieve([{ uniqueId: duplicate, repository: '1.2.3' }]))).toEqual(['XDSUnknownRepositoryId']);
  });

  it('registers metadata of another repository with ITI-42, and replaces a document (RPLC) by deprecating it', async () => {
    const docUniqueId = uid();
    const metadata = iti41({ docUniqueId, document: '' })
      .replace(/[\s\S]*(<lcm:SubmitObjectsRequest[\s\S]*<\/lcm:SubmitObjectsRequest>)[\s\S]*/, '$1')
      .replace(
        '<rim:Slot name="languageCode">',
        `<rim:Slot name="hash"><rim:ValueList><rim:Value>${'a'.repeat(40)}</rim:Value></rim:ValueList></rim:Slot><rim:Slot name="size"><rim:ValueList><rim:Value>12</rim:Value></rim:ValueList></rim:Slot><rim:Slot name="repositoryUniqueId"><rim:ValueList><rim:Value>1.2.3.4.5</rim:Value></rim:ValueList></rim:Slot><rim:Slot name="languageCode">`,
      );
    const registered = await post('registry', soap('urn:ihe:iti:2007:RegisterDocumentSet-b', metadata), 'application/soap+xml');
    expect(registryResponse(registered)['@status']).toBe(SUCCESS);
    const entry = extrinsic(await findDocuments(pid('p-1001'))).find((o) => uniqueIdOf(o) === docUniqueId);
    expect(slot(entry, 'repositoryUniqueId')).toEqual(['1.2.3.4.5']);
    // Not held here: ITI-43 at this repository does not know it.
    expect(errorCodes(await retrieve([{ uniqueId: docUniqueId }]))).toEqual(['XDSDocumentUniqueIdError']);
    // ITI-42 without hash/size/repositoryUniqueId is refused.
    const bare = iti41({ docUniqueId: uid(), document: '' }).replace(/[\s\S]*(<lcm:SubmitObjectsRequest[\s\S]*<\/lcm:SubmitObjectsRequest>)[\s\S]*/, '$1');
    expect(errorCodes(await post('registry', soap('urn:ihe:iti:2007:RegisterDocumentSet-b', bare), 'application/soap+xml'))).toEqual([
      'XDSRegistryMetadataError',
    ]);

    const replacement = uid();
    const replaced = await provideInline(Buffer.from('<v2/>'), {
      docUniqueId: replacement,
      edit: (text) =>
        text.replace(
          '</rim:RegistryObjectList>',
          `<rim:Association associationType="urn:ihe:iti:2007:AssociationType:RPLC" sourceObject="Document01" targetObject="${entry['@id']}" id="as02"/></rim:RegistryObjectList>`,
        ),
    });
    expect(registryResponse(replaced)['@status']).toBe(SUCCESS);
    const approved = extrinsic(await findDocuments(pid('p-1001'))).map(uniqueIdOf);
    expect(approved).toContain(replacement);
    expect(approved).not.toContain(docUniqueId);
    const deprecated = extrinsic(
      await findDocuments(pid('p-1001'), { $XDSDocumentEntryStatus: ["('urn:oasis:names:tc:ebxml-regrep:StatusType:Deprecated')"] }),
    );
    expect(deprecated.map(uniqueIdOf)).toEqual([docUniqueId]);
  });

  it("[SEC-004] keeps tenants apart on every transaction: another tenant's token finds and retrieves nothing", async () => {
    const docUniqueId = uid();
    const setUniqueId = uid();
    expect(registryResponse(await provideMtom(CCD, { docUniqueId, setUniqueId }))['@status']).toBe(SUCCESS);
    const entry = extrinsic(await query(GET_DOCUMENTS, { $XDSDocumentEntryUniqueId: [`('${docUniqueId}')`] }))[0];

    // acme has no p-1001: its registry does not know the patient.
    expect(errorCodes(await findDocuments(pid('p-1001'), {}, 'LeafClass', acme))).toEqual(['XDSUnknownPatientId']);
    expect(
      errorCodes(
        await query(FIND_SUBMISSION_SETS, { $XDSSubmissionSetPatientId: [`'${pid('p-1001')}'`], $XDSSubmissionSetStatus: [APPROVED] }, 'LeafClass', acme),
      ),
    ).toEqual(['XDSUnknownPatientId']);
    const byId = await query(GET_DOCUMENTS, { $XDSDocumentEntryUniqueId: [`('${docUniqueId}')`] }, 'ObjectRef', acme);
    expect(registryResponse(byId)['@status']).toBe(SUCCESS);
    expect(byId.body.AdhocQueryResponse.RegistryObjectList?.ObjectRef ?? []).toHaveLength(0);
    expect(extrinsic(await query(GET_DOCUMENTS, { $XDSDocumentEntryEntryUUID: [`('${entry['@id']}')`] }, 'LeafClass', acme))).toHaveLength(0);
    const associations = await query(GET_ASSOCIATIONS, { $uuid: [`('${entry['@id']}')`] }, 'LeafClass', acme);
    expect(associations.body.AdhocQueryResponse.RegistryObjectList?.Association ?? []).toHaveLength(0);
    const contents = await query(GET_SS_AND_CONTENTS, { $XDSSubmissionSetUniqueId: [`'${setUniqueId}'`] }, 'LeafClass', acme);
    expect(contents.body.AdhocQueryResponse.RegistryObjectList?.RegistryPackage ?? []).toHaveLength(0);
    const fetched = await retrieve([{ uniqueId: docUniqueId }], acme);
    expect(errorCodes(fetched)).toEqual(['XDSDocumentUniqueIdError']);
    expect(fetched.parts.size).toBe(0);
    // Submitting for another tenant's patient, or a document uniqueId another tenant holds.
    expect(errorCodes(await provideInline(CCD, { docUniqueId: uid() }, acme))).toEqual(['XDSUnknownPatientId']);
    expect(registryResponse(await provideInline(CCD, { docUniqueId, patient: pid('p-2001') }, acme))['@status']).toBe(SUCCESS);
    expect(extrinsic(await findDocuments(pid('p-2001'), {}, 'LeafClass', acme)).map(uniqueIdOf)).toEqual([docUniqueId]);
  });

  it('authenticates and authorizes like the rest of the API; SOAP problems are SOAP 1.2 faults', async () => {
    const unauthenticated = await findDocuments(pid('p-1001'), {}, 'LeafClass', null);
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body.Fault.Code.Value[0]).toBe('soap:Sender');
    expect(unauthenticated.body.Fault.Code.Subcode.Value[0]).toBe('cg:UNAUTHENTICATED');

    // A receptionist has no access to documents (the policy point's document area).
    const receptionist = await t.token({ roles: ['receptionist'] });
    const denied = await findDocuments(pid('p-1001'), {}, 'LeafClass', receptionist);
    expect(denied.status).toBe(403);
    expect(denied.body.Fault.Code.Subcode.Value[0]).toBe('cg:FORBIDDEN');
    expect((await provideInline(CCD, { docUniqueId: uid() }, receptionist)).status).toBe(403);
    // A patient reads their own documents only.
    const patient = await t.token({ roles: ['patient'], patientId: 'p-1002' });
    expect(registryResponse(await findDocuments(pid('p-1002'), {}, 'ObjectRef', patient))['@status']).toBe(SUCCESS);
    expect(errorCodes(await findDocuments(pid('p-1001'), {}, 'ObjectRef', patient))).toEqual(['XDSUnknownPatientId']);

    const wrongAction = await post('repository', soap('urn:ihe:iti:2007:RegistryStoredQuery', '<x/>'), 'application/soap+xml');
    expect(wrongAction.status).toBe(400);
    expect(wrongAction.body.Fault.Code.Subcode.Value[0]).toBe('wsa:ActionNotSupported');
    const soap11 = await post('registry', '<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body/></e:Envelope>', 'application/soap+xml');
    expect(soap11.body.Fault.Code.Value[0]).toBe('soap:VersionMismatch');
    expect((await post('registry', '{}', 'application/json')).status).toBe(415);
    const malformed = await post('registry', '<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body>', 'application/soap+xml');
    expect(malformed.status).toBe(400);
    expect(malformed.body.Fault.Code.Value[0]).toBe('soap:Sender');
  });

  describe('ITI-18 matching in SQL', () => {
    const [LOINC, SNOMED, CONF, FORMAT, LOCAL] = [
      '2.16.840.1.113883.6.1',
      '2.16.840.1.113883.6.96',
      '2.16.840.1.113883.5.25',
      '1.3.6.1.4.1.19376.1.2.3',
      '2.999.4.4',
    ];
    const SCHEME = {
      class: 'urn:uuid:41a5887f-8865-4c09-adf7-e362475b143a',
      type: 'urn:uuid:f0306f51-975f-434e-a61c-c59651d33983',
      conf: 'urn:uuid:f4f85eac-e6cb-4883-b524-f2705394840f',
      format: 'urn:uuid:a09d5840-386c-46f2-b5ad-9c3699a4309d',
      facility: 'urn:uuid:f33fb8ac-18af-42cc-ae0e-ed0b0bdb91e1',
      practice: 'urn:uuid:cccf5598-8b07-4b77-a05e-ae952c785ead',
      events: 'urn:uuid:2c6b8cb7-8b2a-4051-b291-b1ae6a575ef4',
      contentType: 'urn:uuid:aa543740-bdda-424e-8c96-df4873be8500',
    };
    const STABLE = 'urn:uuid:7edca82f-054d-47f2-a032-9b2a5b5186c1';
    const ON_DEMAND = 'urn:uuid:34268e47-fdf5-41a6-ba33-82133c465248';
    const DEPRECATED = "('urn:oasis:names:tc:ebxml-regrep:StatusType:Deprecated')";
    /** A document entry's coded values (`code^^scheme`) and times; absent times are left out. */
    interface Entry {
      class: string;
      type: string;
      conf: string[];
      format: string;
      facility: string;
      practice: string;
      events: string[];
      creation: string;
      start?: string;
      stop?: string;
    }
    /** Its submission set's. */
    interface SetOf {
      submitted: string;
      source: string;
      contentType?: string;
    }
    // The fixture's values.
    const ENTRY: Entry = {
      class: `34133-9^^${LOINC}`,
      type: `34133-9^^${LOINC}`,
      conf: [`N^^${CONF}`],
      format: `urn:hl7-org:sdwg:ccda-structuredBody:2.1^^${FORMAT}`,
      facility: `22232009^^${SNOMED}`,
      practice: `394802001^^${SNOMED}`,
      events: [],
      creation: '20261123101500',
      start: '200412230800',
      stop: '200412230801',
    };
    const SET: SetOf = { submitted: '20261123101600', source: '1.3.6.1.4.1.21367.2005.3.7', contentType: `34133-9^^${LOINC}` };

    const classifications = (scheme: string, object: string, values: string[]) =>
      values
        .map((value, i) => {
          const [code, , codingScheme] = value.split('^');
          return (
            `<rim:Classification classificationScheme="${scheme}" classifiedObject="${object}" id="${object}-${scheme.slice(9, 17)}-${i}" nodeRepresentation="${code}">` +
            `<rim:Slot name="codingScheme"><rim:ValueList><rim:Value>${codingScheme}</rim:Value></rim:ValueList></rim:Slot></rim:Classification>`
          );
        })
        .join('');
    const recode = (text: string, scheme: string, object: string, values: string[]) =>
      text.replace(new RegExp(`<rim:Classification classificationScheme="${scheme}"[\\s\\S]*?</rim:Classification>`), classifications(scheme, object, values));
    const slotted = (text: string, name: string, value: string | undefined) =>
      text.replace(
        new RegExp(`<rim:Slot name="${name}">[\\s\\S]*?</rim:Slot>`),
        value ? `<rim:Slot name="${name}"><rim:ValueList><rim:Value>${value}</rim:Value></rim:ValueList></rim:Slot>` : '',
      );

    /** ITI-41 of the fixture's shape: these document entries (uniqueIds given), members of one submission set, the first replacing `options.replaces`. */
    const submit = async (patient: string, entries: Array<[string, Entry]>, set: SetOf, options: { setUniqueId?: string; replaces?: string } = {}) => {
      let text = ITI41.replace(/\{\{PATIENT_ID\}\}/g, pid(patient).replace(/&/g, '&amp;')).replace('{{SET_UNIQUE_ID}}', options.setUniqueId ?? uid());
      const template = /<rim:ExtrinsicObject id="Document01"[\s\S]*?<\/rim:ExtrinsicObject>/.exec(text)![0];
      const objects = entries.map(([uniqueId, e], n) => {
        const id = `Document${n + 1}`;
        let object = template.replace(/Document01/g, id).replace('{{DOC_UNIQUE_ID}}', uniqueId);
        for (const key of ['class', 'type', 'format', 'facility', 'practice'] as const) object = recode(object, SCHEME[key], id, [e[key]]);
        object = recode(object, SCHEME.conf, id, e.conf);
        object = object.replace('<rim:ExternalIdentifier id="ei01"', `${classifications(SCHEME.events, id, e.events)}<rim:ExternalIdentifier id="ei01"`);
        for (const [name, value] of [
          ['creationTime', e.creation],
          ['serviceStartTime', e.start],
          ['serviceStopTime', e.stop],
        ] as const)
          object = slotted(object, name, value);
        return object;
      });
      text = text.replace(template, objects.join(''));
      text = slotted(text, 'submissionTime', set.submitted).replace('value="1.3.6.1.4.1.21367.2005.3.7"', `value="${set.source}"`);
      text = recode(text, SCHEME.contentType, 'SubmissionSet01', set.contentType ? [set.contentType] : []);
      const members = entries.map(
        (_, n) =>
          `<rim:Association associationType="urn:oasis:names:tc:ebxml-regrep:AssociationType:HasMember" sourceObject="SubmissionSet01" targetObject="Document${n + 1}" id="member${n + 1}">` +
          `<rim:Slot name="SubmissionSetStatus"><rim:ValueList><rim:Value>Original</rim:Value></rim:ValueList></rim:Slot></rim:Association>`,
      );
      const replacing = options.replaces
        ? `<rim:Association associationType="urn:ihe:iti:2007:AssociationType:RPLC" sourceObject="Document1" targetObject="${options.replaces}" id="rplc"/>`
        : '';
      text = text
        .replace(/<rim:Association [\s\S]*?<\/rim:Association>/, members.join('') + replacing)
        .replace(
          /<xdsb:Document id="Document01">\{\{DOCUMENT\}\}<\/xdsb:Document>/,
          entries.map(([uniqueId], n) => `<xdsb:Document id="Document${n + 1}">${Buffer.from(uniqueId).toString('base64')}</xdsb:Document>`).join(''),
        );
      const stored = await post('repository', text, 'application/soap+xml; charset=UTF-8');
      expect(errorCodes(stored)).toEqual([]);
    };
    const newPatient = async () => {
      const id = `p-q${Date.now()}${Math.floor(Math.random() * 1e3)}`;
      const created = await t.graphql(`mutation($id: ID!) { createPatient(input: { id: $id, givenNames: ["Query"], family: "Registry" }) { id } }`, { id });
      expect(created.body.errors).toBeUndefined();
      return id;
    };
    const rowsRead = async () => (await scrape(`${t.url}/metrics`)).total('caregraph_xds_registry_rows_read_total');
    const setUniqueIdOf = (object: any) =>
      [object.ExternalIdentifier].flat().find((e: any) => e['@identificationScheme'] === 'urn:uuid:96fdda7c-d067-4183-912e-bf5ee74998a8')['@value'];

    it('FindDocuments and FindSubmissionSets read only the entries they answer, and answer as matching in memory did', async () => {
      const patient = await newPatient();
      // Eight submissions of one entry each, with codes of several schemes, times of every precision (or none) and
      // set attributes; the seventh entry is replaced by the eighth (Deprecated).
      const code = (value: string, scheme: string) => `${value}^^${scheme}`;
      const entries: Array<[Partial<Entry>, Partial<SetOf>]> = [
        [{ format: code('F-A', FORMAT), creation: '20261120101500' }, { source: '2.999.1.9' }],
        [
          {
            class: code('11488-4', LOINC),
            type: code('11488-4', LOINC),
            conf: [code('R', CONF)],
            format: code('F-B', FORMAT),
            practice: code('P-2', LOCAL),
            events: [code('E1', LOCAL)],
            creation: '2026',
            start: '2004',
            stop: undefined,
          },
          { submitted: '2026', contentType: undefined },
        ],
        [
          {
            class: code('34133-9', LOCAL),
            type: code('T-X', LOCAL),
            conf: [code('N', CONF), code('V', CONF)],
            format: code('F-A', FORMAT),
            facility: code('F-2', LOCAL),
            events: [code('E1', LOCAL), code('E2', LOCAL)],
            creation: '202611',
            start: undefined,
            stop: undefined,
          },
          { submitted: '202611', source: '2.999.1.9', contentType: code('CT-1', LOCAL) },
        ],
        [
          {
            class: code('11488-4', LOINC),
            conf: [code('V', CONF)],
            format: code('F-B', FORMAT),
            events: [code('E2', SNOMED)],
            creation: '20261120',
            start: '20041224',
            stop: '20041225',
          },
          { submitted: '20261120' },
        ],
        [
          {
            type: code('T-X', LOCAL),
            format: code('F-A', FORMAT),
            facility: code('F-2', LOCAL),
            practice: code('P-2', LOCAL),
            events: [code('E1', LOCAL)],
            creation: '2026112010',
            start: '2004122308',
            stop: '200412231000',
          },
          { submitted: '2026112010', source: '2.999.1.9', contentType: undefined },
        ],
        [
          {
            class: code('C-5', LOCAL),
            type: code('11488-4', LOINC),
            conf: [code('R', CONF), code('N', CONF)],
            format: code('F-C', FORMAT),
            creation: '20251231235959',
            start: '20050101',
            stop: '2005',
          },
          { submitted: '20251231235959', contentType: code('CT-1', LOCAL) },
        ],
        [{ creation: '202611201020' }, { submitted: '202611201020', source: '2.999.1.9' }],
        [{}, { contentType: undefined }],
      ];
      const docs = entries.map(() => uid());
      for (const [i, [entry, set]] of entries.entries()) {
        const replaces = i === 7 ? extrinsic(await query(GET_DOCUMENTS, { $XDSDocumentEntryUniqueId: [`('${docs[6]}')`] }))[0]['@id'] : undefined;
        await submit(patient, [[docs[i], { ...ENTRY, ...entry }]], { ...SET, ...set }, { replaces });
      }
      const allSets = await query(FIND_SUBMISSION_SETS, { $XDSSubmissionSetPatientId: [`'${pid(patient)}'`], $XDSSubmissionSetStatus: [APPROVED] });
      const sets: string[] = allSets.body.AdhocQueryResponse.RegistryObjectList.RegistryPackage.map(setUniqueIdOf);
      expect(sets).toHaveLength(8);

      const approved = [0, 1, 2, 3, 4, 5, 7];
      const findDocumentsChecks: Array<[Record<string, string[]>, number[]]> = [
        [{}, approved],
        [{ $XDSDocumentEntryStatus: [DEPRECATED] }, [6]],
        [
          { $XDSDocumentEntryStatus: [`('urn:oasis:names:tc:ebxml-regrep:StatusType:Approved','urn:oasis:names:tc:ebxml-regrep:StatusType:Deprecated')`] },
          [0, 1, 2, 3, 4, 5, 6, 7],
        ],
        [{ $XDSDocumentEntryClassCode: [`('34133-9^^${LOINC}')`] }, [0, 4, 7]],
        // A code without a scheme matches it in every scheme; the values of one Value are ORed, Values ANDed.
        [{ $XDSDocumentEntryClassCode: ["('34133-9')"] }, [0, 2, 4, 7]],
        [{ $XDSDocumentEntryClassCode: [`('11488-4^^${LOINC}','C-5^^${LOCAL}')`] }, [1, 3, 5]],
        [{ $XDSDocumentEntryClassCode: ["('34133-9')", `('34133-9^^${LOCAL}')`] }, [2]],
        [{ $XDSDocumentEntryTypeCode: [`('11488-4^^${LOINC}')`] }, [1, 5]],
        [{ $XDSDocumentEntryPracticeSettingCode: [`('P-2^^${LOCAL}')`] }, [1, 4]],
        [{ $XDSDocumentEntryHealthcareFacilityTypeCode: [`('F-2^^${LOCAL}','none^^${LOCAL}')`] }, [2, 4]],
        [{ $XDSDocumentEntryEventCodeList: [`('E1^^${LOCAL}')`] }, [1, 2, 4]],
        [{ $XDSDocumentEntryEventCodeList: ["('E2')"] }, [2, 3]],
        [{ $XDSDocumentEntryEventCodeList: [`('E1^^${LOCAL}')`, `('E2^^${LOCAL}')`] }, [2]],
        [{ $XDSDocumentEntryConfidentialityCode: [`('V^^${CONF}')`] }, [2, 3]],
        [{ $XDSDocumentEntryConfidentialityCode: [`('R^^${CONF}','V^^${CONF}')`] }, [1, 2, 3, 5]],
        [{ $XDSDocumentEntryConfidentialityCode: [`('N^^${CONF}')`, `('R^^${CONF}')`] }, [5]],
        [{ $XDSDocumentEntryFormatCode: [`('F-B^^${FORMAT}')`] }, [1, 3]],
        [{ $XDSDocumentEntryType: [`('${STABLE}')`] }, approved],
        [{ $XDSDocumentEntryType: [`('${ON_DEMAND}')`] }, []],
        // Time ranges: from inclusive, to exclusive, each compared on the shorter precision; no time matches no range.
        [{ $XDSDocumentEntryCreationTimeFrom: ['20261120'], $XDSDocumentEntryCreationTimeTo: ['2026112011'] }, [0, 4]],
        [
          {
            $XDSDocumentEntryCreationTimeFrom: ['20261120'],
            $XDSDocumentEntryCreationTimeTo: ['2026112011'],
            $XDSDocumentEntryStatus: [`('urn:oasis:names:tc:ebxml-regrep:StatusType:Approved','urn:oasis:names:tc:ebxml-regrep:StatusType:Deprecated')`],
          },
          [0, 4, 6],
        ],
        [{ $XDSDocumentEntryCreationTimeFrom: ['2026'] }, [0, 1, 2, 3, 4, 7]],
        [{ $XDSDocumentEntryCreationTimeTo: ['2026'] }, [5]],
        [{ $XDSDocumentEntryServiceStartTimeFrom: ['200412230800'], $XDSDocumentEntryServiceStartTimeTo: ['20041224'] }, [0, 4, 7]],
        [{ $XDSDocumentEntryServiceStopTimeFrom: ['2005'] }, [5]],
        [{ $XDSDocumentEntryServiceStopTimeTo: ['2005'] }, [0, 3, 4, 7]],
        [
          {
            $XDSDocumentEntryClassCode: ["('34133-9')"],
            $XDSDocumentEntryFormatCode: [`('F-A^^${FORMAT}')`],
            $XDSDocumentEntryServiceStartTimeFrom: ['20041223'],
          },
          [0, 4],
        ],
        [
          {
            $XDSDocumentEntryConfidentialityCode: [`('N^^${CONF}')`],
            $XDSDocumentEntryCreationTimeFrom: ['202611'],
            $XDSDocumentEntryEventCodeList: [`('E1^^${LOCAL}')`],
          },
          [2, 4],
        ],
      ];
      for (const [params, expected] of findDocumentsChecks) {
        const before = await rowsRead();
        const found = extrinsic(await findDocuments(pid(patient), params)).map(uniqueIdOf);
        expect({ params, found }).toEqual({ params, found: expected.map((i) => docs[i]) });
        // Only the entries answered are read.
        expect({ params, read: (await rowsRead()) - before }).toEqual({ params, read: expected.length });
      }

      const findSets = (params: Record<string, string[]>) =>
        query(FIND_SUBMISSION_SETS, { $XDSSubmissionSetPatientId: [`'${pid(patient)}'`], $XDSSubmissionSetStatus: [APPROVED], ...params });
      const findSubmissionSetsChecks: Array<[Record<string, string[]>, number[]]> = [
        [{}, [0, 1, 2, 3, 4, 5, 6, 7]],
        [{ $XDSSubmissionSetStatus: [DEPRECATED] }, []],
        [{ $XDSSubmissionSetSourceId: ["('2.999.1.9')"] }, [0, 2, 4, 6]],
        [{ $XDSSubmissionSetSourceId: ["('2.999.1.9','1.3.6.1.4.1.21367.2005.3.7')"] }, [0, 1, 2, 3, 4, 5, 6, 7]],
        [{ $XDSSubmissionSetSubmissionTimeFrom: ['20261120'], $XDSSubmissionSetSubmissionTimeTo: ['2026112011'] }, [4, 6]],
        [{ $XDSSubmissionSetSubmissionTimeFrom: ['2026'] }, [0, 1, 2, 3, 4, 6, 7]],
        [{ $XDSSubmissionSetSubmissionTimeTo: ['2026'] }, [5]],
        [{ $XDSSubmissionSetContentType: [`('34133-9^^${LOINC}')`] }, [0, 3, 6]],
        [{ $XDSSubmissionSetContentType: ["('CT-1')"] }, [2, 5]],
        [{ $XDSSubmissionSetContentType: [`('34133-9^^${LOINC}','CT-1^^${LOCAL}')`] }, [0, 2, 3, 5, 6]],
        [
          { $XDSSubmissionSetSourceId: ["('2.999.1.9')"], $XDSSubmissionSetContentType: [`('CT-1^^${LOCAL}')`], $XDSSubmissionSetSubmissionTimeFrom: ['2026'] },
          [2],
        ],
      ];
      for (const [params, expected] of findSubmissionSetsChecks) {
        const before = await rowsRead();
        const found = await findSets(params);
        expect(errorCodes(found)).toEqual([]);
        const got = (found.body.AdhocQueryResponse.RegistryObjectList?.RegistryPackage ?? []).map(setUniqueIdOf);
        expect({ params, got }).toEqual({ params, got: expected.map((i) => sets[i]) });
        expect({ params, read: (await rowsRead()) - before }).toEqual({ params, read: expected.length });
      }
    });

    it('GetSubmissionSetAndContents reads the set and only the members it answers', async () => {
      const patient = await newPatient();
      const setUniqueId = uid();
      const members = [uid(), uid(), uid()];
      const [fa, fb, n, r] = [`F-A^^${FORMAT}`, `F-B^^${FORMAT}`, `N^^${CONF}`, `R^^${CONF}`];
      const entries: Array<[string, Entry]> = [
        [members[0], { ...ENTRY, format: fa, conf: [n] }],
        [members[1], { ...ENTRY, format: fb, conf: [n] }],
        [members[2], { ...ENTRY, format: fa, conf: [r] }],
      ];
      await submit(patient, entries, SET, { setUniqueId });
      const checks: Array<[Record<string, string[]>, number[]]> = [
        [{}, [0, 1, 2]],
        [{ $XDSDocumentEntryFormatCode: [`('F-A^^${FORMAT}')`] }, [0, 2]],
        [{ $XDSDocumentEntryConfidentialityCode: [`('R^^${CONF}')`] }, [2]],
        [{ $XDSDocumentEntryFormatCode: [`('F-A^^${FORMAT}')`], $XDSDocumentEntryConfidentialityCode: [`('N^^${CONF}')`] }, [0]],
        [{ $XDSDocumentEntryType: [`('${ON_DEMAND}')`] }, []],
      ];
      for (const [params, expected] of checks) {
        const before = await rowsRead();
        const list = (await query(GET_SS_AND_CONTENTS, { $XDSSubmissionSetUniqueId: [`'${setUniqueId}'`], ...params })).body.AdhocQueryResponse
          .RegistryObjectList;
        expect(list.RegistryPackage.map(setUniqueIdOf)).toEqual([setUniqueId]);
        // The members' order is the database's (no order asked), as it was.
        const found = (list.ExtrinsicObject ?? []).map(uniqueIdOf).sort();
        expect({ params, found }).toEqual({ params, found: expected.map((i) => members[i]).sort() });
        expect((list.Association ?? []).map((a: any) => a['@targetObject']).sort()).toEqual((list.ExtrinsicObject ?? []).map((o: any) => o['@id']).sort());
        // The set and the members answered.
        expect({ params, read: (await rowsRead()) - before }).toEqual({ params, read: 1 + expected.length });
      }
    });
  });

  it('[LOG-001] audits every transaction: who, which transaction, which patient, which documents', async () => {
    const docUniqueId = uid();
    await provideMtom(CCD, { docUniqueId });
    await findDocuments(pid('p-1001'));
    await retrieve([{ uniqueId: docUniqueId }]);
    await provideInline(CCD, { docUniqueId: uid(), patient: pid('p-9999') });

    const created = (await audit('XdsDocument')).find((r) => r.after?.uniqueId === docUniqueId);
    expect(created).toMatchObject({ actor: 'test-user', action: 'create', after: { transaction: 'ITI-41', patientId: 'p-1001', stored: true } });
    const transactions = await audit('XdsTransaction');
    const query18 = transactions.find((r) => r.after?.transaction === 'ITI-18' && r.after.documents?.includes(docUniqueId));
    expect(query18).toMatchObject({ actor: 'test-user', action: 'read', after: { query: 'FindDocuments', patientId: 'p-1001' } });
    const retrieve43 = transactions.find((r) => r.after?.transaction === 'ITI-43' && r.after.documents?.includes(docUniqueId));
    expect(retrieve43).toMatchObject({ action: 'read', after: { patientIds: ['p-1001'] } });
    expect(transactions.some((r) => r.action === 'refuse' && r.after.transaction === 'ITI-41' && r.after.errors.includes('XDSUnknownPatientId'))).toBe(true);
    // The reads are in the patient's access log too.
    const log = await t.graphql(`{ accessLog(patientId: "p-1001", limit: 100) { data { entityType action } } }`);
    expect(log.body.data.accessLog.data.some((e: any) => e.entityType === 'XdsDocument' && e.action === 'read')).toBe(true);
    // The chain still verifies.
    expect((await t.graphql('{ verifyAuditChain { valid } }')).body.data.verifyAuditChain.valid).toBe(true);
  });
});
