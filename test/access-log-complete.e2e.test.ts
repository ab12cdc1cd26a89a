import { validateFhir } from './fhir-support';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { VITALS } from './ehr-fixtures';
import { callTool, connectMcp, structured } from './mcp.helpers';
import { provideBundle, uid as oid } from './support/mhd-bundle';

/**
 * NEN 7513 (docs/security.md, "Access log"): every clinical read path writes entries that name the actor, the
 * responsible user, the patient, the action, the data category, the time, the purpose of use, the grounds the
 * policy point granted the read on, and the client. Each path is walked once, by a subject of its own, and the
 * patient's log is read back as an admin over REST (and one entry as a FHIR AuditEvent).
 */
describe(`every clinical read path writes a complete access-log entry (${backendName})`, () => {
  let t: TestPlatform;
  let uid: string;
  /** The MHD document (ITI-65) of p-1001 the document paths read. */
  let binaryPath: string;
  const tenant = { 'x-tenant-id': 'demo' };
  const AGENT = 'claude-desktop';

  interface Path {
    name: string;
    roles: string[];
    /** The grounds the policy point gives this caller's reads (of one data category). */
    grounds: string | ((category: string) => string);
    purpose: string;
    patientId?: string;
    clientId?: string;
    /** Who acts for the token's subject (its `act` claim): the entries' actor, the subject their responsible user. */
    actor?: string;
    /** The data category every entry of the path names, where it is one. */
    category?: string;
    /** A data category one of the path's entries at least names. */
    including?: string;
    read: (token: string) => Promise<unknown>;
  }

  const ok = async (res: Promise<{ status: number; body: any }>) => {
    const answer = await res;
    expect(answer.status).toBeLessThan(300);
    return answer.body;
  };
  const gql = async (token: string, query: string) => {
    const res = await t.graphql(query, {}, { token });
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  };

  /** ITI-18 FindDocuments of p-1001 over SOAP 1.2, as an XDS.b document consumer sends it. */
  const xdsFind = async (token: string) => {
    const envelope =
      `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:a="http://www.w3.org/2005/08/addressing"><s:Header>` +
      `<a:Action s:mustUnderstand="true">urn:ihe:iti:2007:RegistryStoredQuery</a:Action><a:MessageID>urn:uuid:${crypto.randomUUID()}</a:MessageID></s:Header><s:Body>` +
      `<query:AdhocQueryRequest xmlns:query="urn:oasis:names:tc:ebxml-regrep:xsd:query:3.0" xmlns:rim="urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0">` +
      `<query:ResponseOption returnComposedObjects="true" returnType="LeafClass"/><rim:AdhocQuery id="urn:uuid:14d4debf-8f97-4251-9a74-a90016b0af0d">` +
      `<rim:Slot name="$XDSDocumentEntryPatientId"><rim:ValueList><rim:Value>'p-1001^^^&amp;${t.platform.runtime.config.XDS_ASSIGNING_AUTHORITY}&amp;ISO'</rim:Value></rim:ValueList></rim:Slot>` +
      `<rim:Slot name="$XDSDocumentEntryStatus"><rim:ValueList><rim:Value>('urn:oasis:names:tc:ebxml-regrep:StatusType:Approved')</rim:Value></rim:ValueList></rim:Slot>` +
      `</rim:AdhocQuery></query:AdhocQueryRequest></s:Body></s:Envelope>`;
    const res = await fetch(`${t.url}/xds/registry`, {
      method: 'POST',
      headers: { 'content-type': 'application/soap+xml; charset=UTF-8', authorization: `Bearer ${token}` },
      body: envelope,
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain('ResponseStatusType:Success');
    expect(text).toContain('ExtrinsicObject');
    return text;
  };

  const staff = { roles: ['clinician'], grounds: 'treatment', purpose: 'TREAT' };
  const PATHS: Path[] = [
    {
      name: 'demographics-rest',
      ...staff,
      category: 'demographics',
      read: (token) => ok(t.request('GET', '/api/ehr/patients/p-1001', { token, headers: tenant })),
    },
    { name: 'patient-list-graphql', ...staff, read: (token) => gql(token, '{ patients(limit: 100) { data { id } } }') },
    {
      name: 'compositions-graphql',
      ...staff,
      read: (token) => gql(token, '{ compositions(filter: { patientId: "p-1001" }) { data { uid } } }'),
    },
    {
      name: 'composition-rest',
      ...staff,
      category: 'observation',
      read: (token) => ok(t.request('GET', `/api/ehr/compositions/${uid}`, { token, headers: tenant })),
    },
    { name: 'patient-compositions-rest', ...staff, read: (token) => ok(t.request('GET', '/api/ehr/patients/p-1001/compositions', { token, headers: tenant })) },
    { name: 'history-graphql', ...staff, read: (token) => gql(token, `{ compositionHistory(id: "${uid}") { version } }`) },
    { name: 'ehr-status-openehr', ...staff, read: (token) => ok(t.request('GET', '/openehr/v1/ehr/ehr-p-1001/ehr_status', { token })) },
    { name: 'ehr-openehr', ...staff, read: (token) => ok(t.request('GET', '/openehr/v1/ehr/ehr-p-1001', { token })) },
    { name: 'composition-openehr', ...staff, read: (token) => ok(t.request('GET', `/openehr/v1/ehr/ehr-p-1001/composition/${uid}`, { token })) },
    {
      name: 'aql',
      ...staff,
      read: (token) =>
        ok(t.request('POST', '/openehr/v1/query/aql', { token, body: { q: "SELECT c FROM EHR e[ehr_id/value='ehr-p-1001'] CONTAINS COMPOSITION c" } })),
    },
    { name: 'directory-openehr', ...staff, read: (token) => ok(t.request('GET', '/openehr/v1/ehr/ehr-p-1001/directory', { token })) },
    { name: 'stored-query-openehr', ...staff, read: (token) => ok(t.request('GET', '/openehr/v1/query/org.caregraph::walk?ehr_id=ehr-p-1001', { token })) },
    { name: 'xds-find-documents', ...staff, read: (token) => xdsFind(token) },
    { name: 'mhd-find-documents', ...staff, read: (token) => ok(t.request('GET', '/fhir/R4/DocumentReference?patient=Patient/p-1001', { token })) },
    { name: 'mhd-retrieve-document', ...staff, category: 'document', read: (token) => ok(t.request('GET', `/fhir/R4/${binaryPath}`, { token })) },
    {
      name: 'appointment-graphql',
      ...staff,
      category: 'appointment',
      read: (token) => gql(token, '{ appointment(id: "appt-1001") { id start } }'),
    },
    {
      name: 'patient-appointments-graphql',
      ...staff,
      including: 'appointment',
      read: (token) => gql(token, '{ patient(id: "p-1001") { appointments { data { id } } } }'),
    },
    {
      name: 'schedule-rest',
      roles: ['receptionist'],
      grounds: 'treatment',
      purpose: 'TREAT',
      category: 'appointment',
      read: (token) => {
        const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
        return ok(t.request('GET', `/v1/appointments?from=${day(-180)}&to=${day(180)}`, { token }));
      },
    },
    { name: 'fhir-appointment', ...staff, category: 'appointment', read: (token) => ok(t.request('GET', '/fhir/R4/Appointment/appt-1001', { token })) },
    { name: 'fhir-read', ...staff, read: (token) => ok(t.request('GET', '/fhir/R4/Patient/p-1001', { token })) },
    { name: 'fhir-search', ...staff, read: (token) => ok(t.request('GET', '/fhir/R4/Observation?patient=p-1001', { token })) },
    { name: 'fhir-everything', ...staff, read: (token) => ok(t.request('GET', '/fhir/R4/Patient/p-1001/$everything', { token })) },
    { name: 'cda-export', ...staff, read: (token) => ok(t.request('GET', '/api/ehr/patients/p-1001/cda', { token })) },
    {
      name: 'clinical-context',
      ...staff,
      read: (token) => gql(token, '{ clinicalContext(patientId: "p-1001", purpose: TREATMENT, sections: [VITALS]) { vitals { effective } } }'),
    },
    {
      name: 'integration-fhir',
      roles: ['integration'],
      grounds: 'consent:data_sharing',
      purpose: 'TREAT',
      read: (token) => ok(t.request('GET', '/fhir/R4/Observation?patient=p-1001', { token })),
    },
    {
      name: 'patient-own-record',
      roles: ['patient'],
      patientId: 'p-1001',
      grounds: 'own-record',
      purpose: 'PATRQT',
      read: (token) => ok(t.request('GET', `/openehr/v1/ehr/ehr-p-1001/composition/${uid}`, { token })),
    },
    {
      name: 'ai-client-fhir',
      roles: ['clinician'],
      clientId: AGENT,
      grounds: 'consent:ai_assistance',
      purpose: 'TREAT',
      read: (token) => ok(t.request('GET', '/fhir/R4/Observation?patient=p-1001', { token })),
    },
    {
      name: 'agent-acting-for-clinician',
      roles: ['clinician'],
      clientId: AGENT,
      actor: 'assistant-of-walker',
      grounds: 'consent:ai_assistance',
      purpose: 'TREAT',
      read: (token) => ok(t.request('GET', '/fhir/R4/Observation?patient=p-1001', { token })),
    },
    {
      name: 'mcp-tool',
      roles: ['clinician'],
      clientId: AGENT,
      // The agent reads demographics and the schedule on its role's grant; clinical data only with the patient's consent.
      grounds: (category) => (category === 'demographics' || category === 'appointment' ? 'treatment' : 'consent:ai_assistance'),
      including: 'appointment',
      purpose: 'TREAT',
      read: async (token) => {
        const client = await connectMcp(t, token);
        try {
          return structured(await callTool(client, 'patient_summary', { patientId: 'p-1001', purpose: 'treatment' }));
        } finally {
          await client.close();
        }
      },
    },
  ];

  beforeAll(async () => {
    t = await startTestPlatform();
    const created = await t.request('POST', '/api/ehr/compositions', {
      body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS },
      headers: tenant,
    });
    expect(created.status).toBe(201);
    uid = created.body.uid;
    // What the directory, stored-query and document paths read.
    const folder = { _type: 'FOLDER', archetype_node_id: 'openEHR-EHR-FOLDER.generic.v1', name: { value: 'root' }, items: [] };
    expect((await t.request('POST', '/openehr/v1/ehr/ehr-p-1001/directory', { body: folder })).status).toBe(201);
    const stored = await t.request('PUT', '/openehr/v1/definition/query/org.caregraph::walk', {
      rawBody: 'SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c',
      headers: { 'content-type': 'text/plain' },
    });
    expect(stored.status).toBe(200);
    const provided = await t.request('POST', '/fhir/R4', {
      body: provideBundle({ docUniqueId: oid(), document: Buffer.from('Referral letter for the access-log walk') }),
      headers: { 'content-type': 'application/fhir+json' },
    });
    expect(provided.status).toBe(200);
    binaryPath = provided.body.entry[2].response.location.replace(/\/_history\/1$/, '');
    for (const purpose of ['DATA_SHARING', 'AI_ASSISTANCE'])
      expect((await t.graphql(`mutation { grantConsent(patientId: "p-1001", purpose: ${purpose}) { granted } }`)).body.errors).toBeUndefined();
  });
  afterAll(() => t?.stop());

  const CASES = PATHS.map((path) => [path.name, path] as const);
  it.each(CASES)(
    '[LOG-001, LOG-006] %s writes entries with actor, responsible user, patient, action, data category, time, purpose, grounds and client',
    async (name, path) => {
      const sub = `walker-${name}`;
      const token = await t.token({ tenants: ['demo'], roles: path.roles, sub, patientId: path.patientId, clientId: path.clientId, actor: path.actor });
      await path.read(token);
      const admin = await t.token({ tenants: ['demo'], roles: ['admin'], sub: 'auditor' });
      const log = await ok(t.request('GET', '/api/ehr/patients/p-1001/access-log?limit=100', { token: admin }));
      const actor = path.actor ?? sub;
      const entries = log.data.filter((e: { actor: string }) => e.actor === actor);
      expect(entries.length).toBeGreaterThan(0);
      if (path.including) expect(entries.map((e: { dataCategory: string }) => e.dataCategory)).toContain(path.including);
      for (const entry of entries) {
        expect(entry).toMatchObject({
          actor,
          responsibleUser: sub,
          patientId: 'p-1001',
          action: expect.stringMatching(/^(read|list|query)$/),
          dataCategory: path.category ?? expect.any(String),
          at: expect.any(String),
          purpose: path.purpose,
          grounds: typeof path.grounds === 'string' ? path.grounds : path.grounds(entry.dataCategory),
          client: path.clientId ?? null,
        });
      }
      const event = await ok(t.request('GET', `/fhir/R4/AuditEvent/${entries[0].id}`, { token: admin }));
      expect(validateFhir(event)).toBe(1);
      expect(event.agent[0].policy).toEqual([`urn:caregraph:access-grounds:${entries[0].grounds}`]);
      // The person a token acts for is the AuditEvent's responsible party beside the actor.
      if (path.actor) expect(event.agent[1]).toMatchObject({ who: { identifier: { value: sub } }, requestor: false });
      expect(event.entity.at(-1).detail).toEqual([{ type: 'dataCategory', valueString: entries[0].dataCategory }]);
    },
  );
});
