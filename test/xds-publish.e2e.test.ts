import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { makeCertificate } from '../scripts/support/certificate';
import { XMLParser } from 'fast-xml-parser';
import { startTestPlatform, backendName, type RequestOptions, type TestPlatform } from './harness';
import { openApiContract } from './support/openapi-contract';
import { readMultipart } from './support/multipart';

/**
 * CareGraph as an XDS.b Document Source: instance A publishes a patient's CCD
 * (ITI-41 over SOAP 1.2/MTOM) to instance B, a second real CareGraph acting
 * as the affinity domain's Document Repository and Registry. B is then read
 * with its own XDS (ITI-18, ITI-43) and FHIR (MHD) doors.
 */
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const FIND_DOCUMENTS = 'urn:uuid:14d4debf-8f97-4251-9a74-a90016b0af0d';
const B_REPOSITORY = '2.999.2.2';

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  isArray: (name) => ['ExtrinsicObject', 'ExternalIdentifier', 'Slot', 'Value', 'RegistryError', 'DocumentResponse'].includes(name),
});

const soap = (action: string, payload: string) =>
  `<s:Envelope xmlns:s="${SOAP12}" xmlns:a="http://www.w3.org/2005/08/addressing"><s:Header><a:Action>${action}</a:Action>` +
  `<a:MessageID>urn:uuid:${randomUUID()}</a:MessageID></s:Header><s:Body>${payload}</s:Body></s:Envelope>`;

/** The UUID a 2.25 OID stands for (ITU-T X.667), upper case as CareGraph's CDA ids are. */
const oidUuid = (oid: string) => {
  const hex = BigInt(oid.slice('2.25.'.length)).toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`.toUpperCase();
};

describe(`XDS.b Document Source: publishing CCDs to another CareGraph (${backendName})`, () => {
  let a: TestPlatform;
  let b: TestPlatform;
  let c: TestPlatform;
  let clinician: string;
  const contract = openApiContract();
  /** A REST call whose answer is checked against the OpenAPI document. */
  const rest = async (t: TestPlatform, method: string, path: string, options?: RequestOptions) => {
    const res = await t.request(method, path, options);
    contract.check(method, path, res);
    return res;
  };

  beforeAll(async () => {
    b = await startTestPlatform({ XDS_REPOSITORY_UNIQUE_ID: B_REPOSITORY });
    // A's credential at B: a clinician token of B's tenant demo (document write grant).
    const atB = await b.token({ sub: 'caregraph-a', roles: ['clinician'], ttlSeconds: 3600 });
    a = await startTestPlatform({ XDS_REPOSITORY_URL: `${b.url}/xds/repository`, XDS_REPOSITORY_TOKEN: atB });
    // C sends a token B does not accept.
    c = await startTestPlatform({ XDS_REPOSITORY_URL: `${b.url}/xds/repository`, XDS_REPOSITORY_TOKEN: 'not-a-valid-token' });
    clinician = await a.token({ sub: 'dr-publisher', roles: ['clinician'] });
  }, 120_000);
  afterAll(async () => {
    await c?.stop();
    await a?.stop();
    await b?.stop();
  });

  /** An XDS call to B as a reader of its tenant demo; the SOAP Body's content and the MTOM parts. */
  const atB = async (endpoint: string, action: string, payload: string) => {
    const res = await fetch(`${b.url}/xds/${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/soap+xml; charset=UTF-8', authorization: `Bearer ${await b.token()}` },
      body: soap(action, payload),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get('content-type') ?? '';
    const { root, parts } = type.startsWith('multipart/related')
      ? readMultipart(type, bytes)
      : { root: bytes.toString('utf8'), parts: new Map<string, Buffer>() };
    expect(res.status).toBe(200);
    return { body: xml.parse(root).Envelope.Body, parts };
  };

  const exportAudits = async (t: TestPlatform) => {
    const res = await t.request('GET', '/api/ehr/audit?entityType=XdsTransaction&limit=100');
    expect(res.status).toBe(200);
    return (res.body.data as Array<{ action: string; actor: string; entityId: string; after: any }>).filter((r) => r.action === 'export');
  };

  it('[XCH-011] publishes p-1001 from A to B: B finds it (ITI-18), returns the same bytes (ITI-43) and shows it over FHIR (MHD)', async () => {
    const res = await rest(a, 'POST', '/api/ehr/patients/p-1001/cda/publish', { token: clinician });
    expect(res.status).toBe(201);
    const sent = res.body;
    expect(sent).toEqual({
      patientId: 'p-1001',
      documentUniqueId: expect.stringMatching(/^2\.25\.\d+$/),
      submissionSetUniqueId: expect.stringMatching(/^2\.25\.\d+$/),
      hash: expect.stringMatching(/^[0-9a-f]{40}$/),
      size: expect.any(Number),
      creationTime: expect.stringMatching(/^\d{14}$/),
      repository: `${b.url}/xds/repository`,
    });

    // ITI-18 at B: the entry, with A's metadata and B's repositoryUniqueId.
    const found = await atB(
      'registry',
      'urn:ihe:iti:2007:RegistryStoredQuery',
      `<query:AdhocQueryRequest xmlns:query="urn:oasis:names:tc:ebxml-regrep:xsd:query:3.0" xmlns:rim="urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0">` +
        `<query:ResponseOption returnComposedObjects="true" returnType="LeafClass"/><rim:AdhocQuery id="${FIND_DOCUMENTS}">` +
        `<rim:Slot name="$XDSDocumentEntryPatientId"><rim:ValueList><rim:Value>'p-1001^^^&amp;2.999.1.1&amp;ISO'</rim:Value></rim:ValueList></rim:Slot>` +
        `<rim:Slot name="$XDSDocumentEntryStatus"><rim:ValueList><rim:Value>('urn:oasis:names:tc:ebxml-regrep:StatusType:Approved')</rim:Value></rim:ValueList></rim:Slot>` +
        `</rim:AdhocQuery></query:AdhocQueryRequest>`,
    );
    const response = found.body.AdhocQueryResponse;
    expect(response['@status']).toBe('urn:oasis:names:tc:ebxml-regrep:ResponseStatusType:Success');
    const entries = response.RegistryObjectList.ExtrinsicObject as any[];
    const entry = entries.find((e) => e.ExternalIdentifier.some((x: any) => x['@value'] === sent.documentUniqueId));
    expect(entry).toBeDefined();
    const slot = (name: string) => entry.Slot.find((s: any) => s['@name'] === name)?.ValueList.Value[0];
    expect({ hash: slot('hash'), size: Number(slot('size')), repositoryUniqueId: slot('repositoryUniqueId'), creationTime: slot('creationTime') }).toEqual({
      hash: sent.hash,
      size: sent.size,
      repositoryUniqueId: B_REPOSITORY,
      creationTime: sent.creationTime,
    });
    expect(entry['@mimeType']).toBe('text/xml');

    // ITI-43 at B: the bytes A sent (same SHA-1 and size), the CCD whose id the uniqueId names.
    const retrieved = await atB(
      'repository',
      'urn:ihe:iti:2007:RetrieveDocumentSet',
      `<xdsb:RetrieveDocumentSetRequest xmlns:xdsb="urn:ihe:iti:xds-b:2007"><xdsb:DocumentRequest><xdsb:RepositoryUniqueId>${B_REPOSITORY}</xdsb:RepositoryUniqueId>` +
        `<xdsb:DocumentUniqueId>${sent.documentUniqueId}</xdsb:DocumentUniqueId></xdsb:DocumentRequest></xdsb:RetrieveDocumentSetRequest>`,
    );
    const [document] = retrieved.body.RetrieveDocumentSetResponse.DocumentResponse;
    const href = decodeURIComponent(String(document.Document.Include['@href']).replace(/^cid:/, ''));
    const bytes = retrieved.parts.get(href)!;
    expect({ hash: createHash('sha1').update(bytes).digest('hex'), size: bytes.length }).toEqual({ hash: sent.hash, size: sent.size });
    const text = bytes.toString('utf8');
    expect(text).toContain('<ClinicalDocument');
    expect(text).toContain(`root="${oidUuid(sent.documentUniqueId)}"`);
    // The same document A exports, for the same patient (a fresh export differs only in its id and time).
    expect(text).toContain('<code code="34133-9"');

    // MHD at B: a DocumentReference of p-1001 with the uniqueId, size and hash (base64 SHA-1).
    const fhir = await b.request('GET', '/fhir/R4/DocumentReference?patient=p-1001', { headers: { 'x-tenant-id': 'demo' } });
    expect(fhir.status).toBe(200);
    const reference = fhir.body.entry.map((e: any) => e.resource).find((r: any) => r.masterIdentifier?.value === `urn:oid:${sent.documentUniqueId}`);
    expect(reference).toBeDefined();
    expect(reference.content[0].attachment).toMatchObject({ size: sent.size, hash: Buffer.from(sent.hash, 'hex').toString('base64') });

    // The audit trails: A's export (ATNA-style) and B's stored document, by A's credential.
    const [audit] = (await exportAudits(a)).filter((r) => r.after.documents.includes(sent.documentUniqueId));
    expect(audit).toMatchObject({
      actor: 'dr-publisher',
      entityId: sent.submissionSetUniqueId,
      after: {
        transaction: 'ITI-41',
        role: 'Document Source',
        endpoint: `${b.url}/xds/repository`,
        patientId: 'p-1001',
        hash: sent.hash,
        size: sent.size,
        outcome: 'success',
      },
    });
    const stored = await b.request('GET', `/api/ehr/audit?entityType=XdsDocument&limit=100`);
    expect(stored.body.data.some((r: any) => r.actor === 'caregraph-a' && r.action === 'create' && r.after.uniqueId === sent.documentUniqueId)).toBe(true);
    const chain = await a.graphql('{ verifyAuditChain { valid } }');
    expect(chain.body.data.verifyAuditChain.valid).toBe(true);
  });

  it('over GraphQL too; each publication is a new document', async () => {
    const publish = 'mutation { publishPatientCcd(patientId: "p-1001") { documentUniqueId hash size } }';
    const first = await a.graphql(publish, undefined, { token: clinician });
    const second = await a.graphql(publish, undefined, { token: clinician });
    expect(first.body.errors).toBeUndefined();
    expect(second.body.errors).toBeUndefined();
    expect(second.body.data.publishPatientCcd.documentUniqueId).not.toBe(first.body.data.publishPatientCcd.documentUniqueId);
  });

  it('[XCH-011] a patient B does not know: 502 UPSTREAM_ERROR with B’s XDS error code, audited as a failure', async () => {
    const created = await a.graphql('mutation { createPatient(input: { id: "p-7001", givenNames: ["Noor"], family: "Visser" }) { id } }');
    expect(created.body.errors).toBeUndefined();
    const res = await rest(a, 'POST', '/api/ehr/patients/p-7001/cda/publish', { token: clinician });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: expect.stringContaining('XDSUnknownPatientId'),
      details: [expect.objectContaining({ xdsErrorCode: 'XDSUnknownPatientId' })],
    });
    const audits = (await exportAudits(a)).filter((r) => r.after.patientId === 'p-7001');
    expect(audits).toHaveLength(1);
    expect(audits[0].after).toMatchObject({ transaction: 'ITI-41', outcome: 'failure', errors: ['XDSUnknownPatientId'] });
    // GraphQL answers the same code and details.
    const viaGraphql = await a.graphql('mutation { publishPatientCcd(patientId: "p-7001") { documentUniqueId } }', undefined, { token: clinician });
    expect(viaGraphql.body.errors[0].extensions).toMatchObject({
      code: 'UPSTREAM_ERROR',
      details: [expect.objectContaining({ xdsErrorCode: 'XDSUnknownPatientId' })],
    });
  });

  it('a token B refuses: 502 UPSTREAM_ERROR naming B’s SOAP fault, audited as a failure', async () => {
    const res = await rest(c, 'POST', '/api/ehr/patients/p-1001/cda/publish', { token: await c.token({ roles: ['clinician'] }) });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      details: [expect.objectContaining({ soapCode: 'Sender', soapSubcode: 'cg:UNAUTHENTICATED', httpStatus: 401 })],
    });
    const [audit] = await exportAudits(c);
    expect(audit.after).toMatchObject({ outcome: 'failure', errors: ['cg:UNAUTHENTICATED'], endpoint: `${b.url}/xds/repository` });
  });

  it('over mutual TLS: a TLS terminator in front of B that demands a client certificate (XDS_REPOSITORY_CA_FILE, _CERT_FILE, _KEY_FILE)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'caregraph-xds-tls-'));
    const server = makeCertificate(mkdtempSync(join(dir, 'server-')));
    const client = makeCertificate(mkdtempSync(join(dir, 'client-')));
    const clientDir = client.certFile.slice(0, -'cert.pem'.length);
    const presented: string[] = [];
    // Forwards each request to B after the TLS handshake checked the client certificate against its CA (the client's own).
    const terminator = https.createServer({ key: server.key, cert: server.cert, ca: client.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      presented.push((req.socket as TLSSocket).getPeerCertificate().fingerprint256);
      const target = new URL(req.url!, b.url);
      const forward = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => terminator.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(terminator.address() as AddressInfo).port}/xds/repository`;
    const settings = {
      XDS_REPOSITORY_URL: url,
      XDS_REPOSITORY_TOKEN: await b.token({ sub: 'caregraph-d', roles: ['clinician'] }),
      XDS_REPOSITORY_CA_FILE: server.certFile,
    };
    const withCertificate = await startTestPlatform({
      ...settings,
      XDS_REPOSITORY_CERT_FILE: client.certFile,
      XDS_REPOSITORY_KEY_FILE: join(clientDir, 'key.pem'),
    });
    const without = await startTestPlatform(settings);
    try {
      const published = await rest(withCertificate, 'POST', '/api/ehr/patients/p-1001/cda/publish', {
        token: await withCertificate.token({ roles: ['clinician'] }),
      });
      expect(published.status).toBe(201);
      expect(presented).toHaveLength(1);
      const refused = await rest(without, 'POST', '/api/ehr/patients/p-1001/cda/publish', { token: await without.token({ roles: ['clinician'] }) });
      expect(refused.status).toBe(502);
      expect(refused.body.error.message).toContain('could not be reached');
      expect(presented).toHaveLength(1);
    } finally {
      await withCertificate.stop();
      await without.stop();
      await new Promise((resolve) => terminator.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('without XDS_REPOSITORY_URL: 409 CONFLICT naming the setting; a role without the capability: 403', async () => {
    const unset = await rest(b, 'POST', '/api/ehr/patients/p-1001/cda/publish');
    expect(unset.status).toBe(409);
    expect(unset.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('XDS_REPOSITORY_URL') });
    const nurse = await rest(a, 'POST', '/api/ehr/patients/p-1001/cda/publish', { token: await a.token({ roles: ['nurse'] }) });
    expect(nurse.status).toBe(403);
    expect(nurse.body.error.code).toBe('FORBIDDEN');
    const unknown = await rest(a, 'POST', '/api/ehr/patients/p-9999/cda/publish', { token: clinician });
    expect(unknown.status).toBe(404);
  });
});
