import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { validateFhir } from './fhir-support';
import { compositionDecrypts } from './support/clinical-load';
import { scrape } from './support/metrics';
import { LIST_TYPES, provideBundle, sha1, uid, type BundleOptions } from './support/mhd-bundle';
import { comparator, matchesCriterion, parseSearch } from '../subgraphs/ehr/exchange/fhir/search';

/**
 * IHE MHD (R4) on /fhir/R4 over the XDS registry: ITI-65 in, ITI-66/67/68 out,
 * and both ways across to XDS.b (ITI-41 in, ITI-18 out). Every resource the
 * server answers is validated against the FHIR R4 StructureDefinitions.
 */
const AUTHORITY = '2.999.1.1';
const ITI41 = readFileSync(join(__dirname, 'fixtures', 'xds', 'iti41-provide-and-register.xml'), 'utf8');
const FIND_DOCUMENTS = 'urn:uuid:14d4debf-8f97-4251-9a74-a90016b0af0d';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  isArray: (n) => n === 'ExtrinsicObject',
});

describe(`IHE MHD /fhir/R4 (${backendName})`, () => {
  let t: TestPlatform;
  let acme: string;

  const fhir = async (method: string, path: string, options: { body?: unknown; token?: string; accept?: string } = {}) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.token ?? (await t.token())}`,
      accept: options.accept ?? 'application/fhir+json',
    };
    if (options.body) headers['content-type'] = 'application/fhir+json';
    const res = await fetch(`${t.url}/fhir/R4${path}`, { method, headers, body: options.body ? JSON.stringify(options.body) : undefined });
    const bytes = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get('content-type') ?? '';
    return { status: res.status, type, bytes, body: type.includes('json') ? JSON.parse(bytes.toString('utf8')) : undefined };
  };
  const provide = (o: BundleOptions, token?: string) => fhir('POST', '', { body: provideBundle(o), token });
  const findDocs = async (query: string, token?: string) => {
    const res = await fhir('GET', `/DocumentReference?${query}`, { token });
    expect(res.status).toBe(200);
    validateFhir(res.body);
    return (res.body.entry ?? []).filter((e: any) => e.search?.mode === 'match').map((e: any) => e.resource);
  };
  const byUniqueId = (docs: any[], uniqueId: string) => docs.find((d) => d.masterIdentifier?.value === `urn:oid:${uniqueId}`);
  const issueCodes = (body: any) => body.issue.map((i: any) => i.details?.text).filter(Boolean);

  const soap = async (action: string, payload: string, token?: string) => {
    const envelope =
      `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${SOAP12}" xmlns:a="http://www.w3.org/2005/08/addressing"><s:Header>` +
      `<a:Action s:mustUnderstand="true">${action}</a:Action><a:MessageID>urn:uuid:${randomUUID()}</a:MessageID></s:Header><s:Body>${payload}</s:Body></s:Envelope>`;
    const endpoint = action.includes('StoredQuery') ? 'registry' : 'repository';
    const res = await fetch(`${t.url}/xds/${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/soap+xml; charset=UTF-8', authorization: `Bearer ${token ?? (await t.token())}` },
      body: envelope,
    });
    return xml.parse(await res.text()).Envelope.Body;
  };
  /** ITI-18 FindDocuments (Approved) of a patient: the uniqueIds found. */
  const xdsFind = async (patient: string, token?: string): Promise<string[]> => {
    const body = await soap(
      'urn:ihe:iti:2007:RegistryStoredQuery',
      `<query:AdhocQueryRequest xmlns:query="urn:oasis:names:tc:ebxml-regrep:xsd:query:3.0" xmlns:rim="urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0">` +
        `<query:ResponseOption returnComposedObjects="true" returnType="LeafClass"/><rim:AdhocQuery id="${FIND_DOCUMENTS}">` +
        `<rim:Slot name="$XDSDocumentEntryPatientId"><rim:ValueList><rim:Value>'${patient}^^^&amp;${AUTHORITY}&amp;ISO'</rim:Value></rim:ValueList></rim:Slot>` +
        `<rim:Slot name="$XDSDocumentEntryStatus"><rim:ValueList><rim:Value>('urn:oasis:names:tc:ebxml-regrep:StatusType:Approved')</rim:Value></rim:ValueList></rim:Slot>` +
        `</rim:AdhocQuery></query:AdhocQueryRequest>`,
      token,
    );
    return (body.AdhocQueryResponse.RegistryObjectList?.ExtrinsicObject ?? []).map(
      (o: any) => [o.ExternalIdentifier].flat().find((e: any) => e['@identificationScheme'] === 'urn:uuid:2e82c1f6-a085-4c72-9da3-8640a32e42ab')['@value'],
    );
  };
  const audited = async (entityType = 'XdsTransaction') =>
    ((await t.graphql(`{ auditRecords(entityType: "${entityType}", limit: 100) { data { action after } } }`)).body.data.auditRecords.data as any[]).map(
      (r) => `${r.after.transaction}:${r.action}`,
    );

  beforeAll(async () => {
    t = await startTestPlatform();
    acme = await t.token({ tenants: ['acme'] });
  });
  afterAll(() => t?.stop());

  it('[XCH-012] ITI-65 stores a Provide Document Bundle; ITI-67 finds it, ITI-68 returns its bytes, ITI-66 finds its submission set', async () => {
    const document = Buffer.from('Discharge summary: Anna Jansen, résumé ✓\n', 'utf8');
    const docUniqueId = uid();
    const setUniqueId = uid();
    const stored = await provide({ docUniqueId, setUniqueId, document });
    expect(stored.status).toBe(200);
    validateFhir(stored.body);
    expect(stored.body.type).toBe('transaction-response');
    expect(stored.body.entry.map((e: any) => e.response.status)).toEqual(['201 Created', '201 Created', '201 Created']);
    const [listPath, docPath, binaryPath] = stored.body.entry.map((e: any) => e.response.location.replace(/\/_history\/1$/, ''));
    expect(listPath).toMatch(/^List\/xds-[0-9a-f-]{36}$/);
    expect(docPath).toMatch(/^DocumentReference\/xds-[0-9a-f-]{36}$/);
    expect(binaryPath).toBe(docPath.replace('DocumentReference', 'Binary'));
    expect(stored.body.entry[1].fullUrl).toBe(`${t.url}/fhir/R4/${docPath}`);

    const doc = byUniqueId(await findDocs('patient=Patient/p-1001&status=current'), docUniqueId);
    expect(doc).toBeDefined();
    expect(`DocumentReference/${doc.id}`).toBe(docPath);
    expect(doc.subject.reference).toBe('Patient/p-1001');
    expect(doc.identifier[0].value).toBe(`urn:uuid:${doc.id.slice(4)}`);
    const attachment = doc.content[0].attachment;
    expect(attachment).toMatchObject({
      contentType: 'text/plain',
      size: document.length,
      hash: sha1(document).toString('base64'),
      creation: '2026-11-20T10:15:00Z',
    });
    expect(attachment.url).toBe(binaryPath);
    expect(doc.type.coding[0]).toMatchObject({ system: 'http://loinc.org', code: '34133-9' });
    expect(doc.securityLabel[0].coding[0]).toMatchObject({ system: 'http://terminology.hl7.org/CodeSystem/v3-Confidentiality', code: 'N' });
    expect(doc.content[0].format).toMatchObject({ code: 'urn:ihe:iti:xds:2017:mimeTypeSufficient' });
    expect(doc.context.period).toEqual({ start: '2026-11-19T08:00:00Z', end: '2026-11-20T09:00:00Z' });
    expect(doc.context.practiceSetting.coding[0]).toMatchObject({ system: 'http://snomed.info/sct', code: '394802001' });

    // Search parameters ITI-67 names, on registry entries.
    expect(byUniqueId(await findDocs('patient=p-1001&security-label=http://terminology.hl7.org/CodeSystem/v3-Confidentiality|N'), docUniqueId)).toBeDefined();
    expect(byUniqueId(await findDocs('patient=p-1001&format=urn:ihe:iti:xds:2017:mimeTypeSufficient'), docUniqueId)).toBeDefined();
    expect(byUniqueId(await findDocs('patient=p-1001&status=superseded'), docUniqueId)).toBeUndefined();
    expect(byUniqueId(await findDocs('patient=p-1001&type=http://loinc.org|11488-4'), docUniqueId)).toBeUndefined();

    const read = await fhir('GET', `/${docPath}`);
    expect(read.status).toBe(200);
    validateFhir(read.body);
    expect(read.body.masterIdentifier.value).toBe(`urn:oid:${docUniqueId}`);

    // ITI-68: the document's own type gives the bytes, FHIR JSON a Binary.
    const raw = await fhir('GET', `/${binaryPath}`, { accept: 'text/plain' });
    expect(raw.status).toBe(200);
    expect(raw.type).toMatch(/^text\/plain/);
    expect(raw.bytes.equals(document)).toBe(true);
    const asBinary = await fhir('GET', `/${binaryPath}`);
    expect(asBinary.status).toBe(200);
    validateFhir(asBinary.body);
    expect(asBinary.body).toMatchObject({ resourceType: 'Binary', contentType: 'text/plain' });
    expect(Buffer.from(asBinary.body.data, 'base64').equals(document)).toBe(true);
    expect((await fhir('GET', `/${binaryPath}`, { accept: 'image/png' })).status).toBe(406);

    const lists = await fhir('GET', '/List?patient=p-1001&code=submissionset');
    expect(lists.status).toBe(200);
    validateFhir(lists.body);
    const list = lists.body.entry.map((e: any) => e.resource).find((l: any) => l.identifier.some((i: any) => i.value === `urn:oid:${setUniqueId}`));
    expect(`List/${list.id}`).toBe(listPath);
    expect(list.code.coding[0]).toEqual({ system: LIST_TYPES, code: 'submissionset' });
    expect(list.entry).toEqual([{ item: { reference: docPath } }]);
    expect(list.date).toBe('2026-11-20T10:20:00Z');
    const listRead = await fhir('GET', `/${listPath}`);
    expect(listRead.status).toBe(200);
    validateFhir(listRead.body);

    // Every MHD transaction is audited, like XDS's.
    expect(await audited('XdsDocument')).toContain('ITI-65:create');
    expect(await audited('XdsSubmissionSet')).toContain('ITI-65:create');
    for (const entry of ['ITI-67:read', 'ITI-68:read', 'ITI-66:read']) expect(await audited()).toContain(entry);
  });

  it('crosses over: ITI-65 documents are found by XDS ITI-18, ITI-41 documents by MHD ITI-67 and retrieved by ITI-68', async () => {
    const mhdUniqueId = uid();
    expect((await provide({ docUniqueId: mhdUniqueId, document: Buffer.from('via MHD') })).status).toBe(200);
    expect(await xdsFind('p-1001')).toContain(mhdUniqueId);

    const xdsUniqueId = uid();
    const bytes = Buffer.from('<ClinicalDocument>via XDS.b</ClinicalDocument>');
    const payload = ITI41.replace(/\{\{PATIENT_ID\}\}/g, `p-1001^^^&amp;${AUTHORITY}&amp;ISO`)
      .replace('{{DOC_UNIQUE_ID}}', xdsUniqueId)
      .replace('{{SET_UNIQUE_ID}}', uid())
      .replace('{{DOCUMENT}}', bytes.toString('base64'));
    const res = await fetch(`${t.url}/xds/repository`, {
      method: 'POST',
      headers: { 'content-type': 'application/soap+xml; charset=UTF-8', authorization: `Bearer ${await t.token()}` },
      body: payload,
    });
    expect(await res.text()).toContain('ResponseStatusType:Success');

    const doc = byUniqueId(await findDocs('patient=p-1001&status=current'), xdsUniqueId);
    expect(doc).toBeDefined();
    expect(doc.content[0].attachment).toMatchObject({ contentType: 'text/xml', size: bytes.length, hash: sha1(bytes).toString('base64') });
    const raw = await fhir('GET', `/${doc.content[0].attachment.url}`, { accept: 'text/xml' });
    expect(raw.bytes.equals(bytes)).toBe(true);
  });

  it('[LOG-001] ITI-66 pages Lists before disclosing them: the audit and access log name only the page', async () => {
    const sets = [uid(), uid(), uid()];
    for (const setUniqueId of sets)
      expect((await provide({ patient: 'p-1002', docUniqueId: uid(), setUniqueId, document: Buffer.from('x') })).status).toBe(200);
    const urn = (uniqueId: string) => `urn:oid:${uniqueId}`;
    const search = await fhir('GET', '/List?patient=p-1002&code=submissionset&_sort=-_lastUpdated&_count=1&_offset=1');
    expect(search.status).toBe(200);
    validateFhir(search.body);
    expect(search.body.total).toBe(3);
    const [list] = search.body.entry.map((e: any) => e.resource);
    expect(search.body.entry).toHaveLength(1);
    expect(list.identifier.find((i: any) => i.use === 'usual').value).toBe(urn(sets[1]));
    expect(list.entry).toHaveLength(1);
    const records = (await t.graphql(`{ auditRecords(entityType: "XdsTransaction", limit: 10) { data { after } } }`)).body.data.auditRecords.data as any[];
    const audit = records.map((r) => r.after).find((a) => a.transaction === 'ITI-66');
    expect(audit).toMatchObject({ patientId: 'p-1002', submissionSets: [sets[1]] });
    const log = await t.graphql(`{ accessLog(patientId: "p-1002", limit: 20) { data { entityType entityId } } }`);
    expect(log.body.errors).toBeUndefined();
    const disclosed = (log.body.data.accessLog.data as any[]).filter((e) => e.entityType === 'XdsSubmissionSet');
    expect(disclosed.map((e) => `xds-${e.entityId.replace(/^urn:uuid:/, '')}`)).toEqual([list.id]);
  });

  it('[LOG-001] ITI-67 pages DocumentReferences before disclosing them: the audit and access log name only the page', async () => {
    const docs = [uid(), uid(), uid()];
    for (const docUniqueId of docs) expect((await provide({ patient: 'p-1003', docUniqueId, document: Buffer.from('y') })).status).toBe(200);
    const search = await fhir('GET', '/DocumentReference?patient=p-1003&category=http://loinc.org|34133-9&_sort=-_lastUpdated&_count=1&_offset=1');
    expect(search.status).toBe(200);
    validateFhir(search.body);
    expect(search.body.total).toBe(3);
    expect(search.body.entry).toHaveLength(1);
    const [doc] = search.body.entry.map((e: any) => e.resource);
    expect(doc.masterIdentifier.value).toBe(`urn:oid:${docs[1]}`);
    // Disclosed whole: its encrypted metadata (the title) too.
    expect(doc.description).toBe('Discharge summary');
    const records = (await t.graphql(`{ auditRecords(entityType: "XdsTransaction", limit: 10) { data { after } } }`)).body.data.auditRecords.data as any[];
    expect(records.map((r) => r.after).find((a) => a.transaction === 'ITI-67')).toMatchObject({ patientId: 'p-1003', documents: [docs[1]] });
    const log = await t.graphql(`{ accessLog(patientId: "p-1003", limit: 20) { data { entityType entityId } } }`);
    const disclosed = (log.body.data.accessLog.data as any[]).filter((e) => e.entityType === 'XdsDocument');
    expect(disclosed.map((e) => `xds-${e.entityId.replace(/^urn:uuid:/, '')}`)).toEqual([doc.id]);
  });

  it('ITI-66/67 match, count, sort and page in SQL: a page reads its own rows, and answers as matching the mapped entries in memory does', async () => {
    const created = await fhir('POST', '/Patient', {
      body: { resourceType: 'Patient', name: [{ family: 'Registry', given: ['Paging'] }], birthDate: '1990-01-01' },
    });
    const patient: string = created.body.id;
    const start = new Date().toISOString();
    // 30 documents in 6 submissions of 5 (one submission's entries are registered at the same instant: ties by id), with
    // types, security labels and formats of several code systems, Lists dated at every precision, and one replaced.
    const localType = `T-${Date.now()}`;
    const submitted: string[] = [];
    const listDates = ['2026', '2026-11', '2026-11-20', '2026-11-20T10:20:00Z', '2025-06-01T08:00:00Z', '2026-11-20T10:20:00Z'];
    for (const [b, date] of listDates.entries()) {
      const bundle = provideBundle({ patient, docUniqueId: uid(), document: Buffer.from(`document ${b}-0`) });
      bundle.entry[0].resource.date = date;
      const [list, first, firstBinary] = bundle.entry;
      for (let i = 1; i < 5; i++) {
        const [doc, binary] = [structuredClone(first), structuredClone(firstBinary)];
        const bytes = Buffer.from(`document ${b}-${i}`);
        [doc.fullUrl, binary.fullUrl] = [`urn:uuid:${randomUUID()}`, `urn:uuid:${randomUUID()}`];
        doc.resource.masterIdentifier.value = `urn:oid:${uid()}.${i}`;
        Object.assign(doc.resource.content[0].attachment, { url: binary.fullUrl, size: bytes.length, hash: sha1(bytes).toString('base64') });
        binary.resource.data = bytes.toString('base64');
        bundle.entry.push(doc, binary);
        list.resource.entry.push({ item: { reference: doc.fullUrl } });
      }
      bundle.entry
        .filter((e: any) => e.resource.resourceType === 'DocumentReference')
        .forEach(({ resource: doc }: any, i: number) => {
          if (i % 3 === 1) doc.type = { coding: [{ system: 'http://loinc.org', code: '11488-4' }] };
          if (i % 3 === 2) doc.type = { coding: [{ system: 'urn:oid:2.999.4.4', code: localType }] };
          const confidentiality = (code: string) => ({ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-Confidentiality', code }] });
          if ((b + i) % 4 === 0) doc.securityLabel = [confidentiality('R')];
          if ((b + i) % 4 === 1) doc.securityLabel = [confidentiality('N'), confidentiality('V')];
          if (i % 2 === 1) doc.content[0].format = { system: 'urn:oid:2.999.5.5', code: 'F-1' };
          if (b === 5 && i === 0) doc.relatesTo = [{ code: 'replaces', target: { reference: `DocumentReference/${submitted[1]}` } }];
        });
      const stored = await fhir('POST', '', { body: bundle });
      expect(stored.status).toBe(200);
      submitted.push(
        ...stored.body.entry.filter((e: any) => e.response.location.startsWith('DocumentReference/')).map((e: any) => e.response.location.split('/')[1]),
      );
    }
    const rowsRead = async () => (await scrape(`${t.url}/metrics`)).total('caregraph_xds_registry_rows_read_total');
    const everything = async (type: string) => (await fhir('GET', `/${type}?patient=${patient}&_count=100`)).body.entry.map((e: any) => e.resource);
    const all = { DocumentReference: await everything('DocumentReference'), List: await everything('List') };
    expect([all.DocumentReference.length, all.List.length]).toEqual([30, 6]);

    const answer = async (type: string, query: string, token?: string) => {
      const res = await fhir('GET', `/${type}?${query}`, { token });
      expect(res.status).toBe(200);
      const ids = (mode: string) => (res.body.entry ?? []).filter((e: any) => e.search.mode === mode).map((e: any) => e.resource.id);
      return { total: res.body.total, ids: ids('match'), included: ids('include'), links: res.body.link.map((l: any) => l.relation) };
    };
    /** What matching, sorting and paging the patient's mapped entries in memory answers. */
    const expected = (type: 'DocumentReference' | 'List', query: string) => {
      const search = parseSearch(
        type,
        [...new URLSearchParams(query)].map(([name, value]) => ({ name, value })),
      );
      const matched = all[type]
        .filter((r: any) => search.criteria.every((c) => (c.kind === 'reference' && !c.modifier) || matchesCriterion(r, c)))
        .sort(comparator(search.sort.length ? search.sort : [{ name: 'date', descending: true }]));
      const paged = search.summary !== 'count';
      return {
        total: matched.length,
        ids: paged ? matched.slice(search.offset, search.offset + search.count).map((r: any) => r.id) : [],
        links: ['self', ...(paged && search.offset + search.count < matched.length ? ['next'] : []), ...(paged && search.offset > 0 ? ['previous'] : [])],
      };
    };
    const check = async ([type, query]: ['DocumentReference' | 'List', string]) => {
      const got = await answer(type, `patient=${patient}&${query}`);
      expect({ query, total: got.total, ids: got.ids, links: got.links }).toEqual({ query, ...expected(type, `patient=${patient}&${query}`) });
      return got;
    };

    // A page of 2 of the patient's 30 entries reads 2 rows.
    let before = await rowsRead();
    expect((await check(['DocumentReference', '_count=2&_offset=9&_include=DocumentReference:patient'])).included).toEqual([patient]);
    expect((await rowsRead()) - before).toBe(2);
    before = await rowsRead();
    await check(['List', '_count=2&_offset=3']);
    expect((await rowsRead()) - before).toBe(2);

    const registered = all.DocumentReference.map((d: any) => d.meta.lastUpdated).sort();
    const checks: Array<['DocumentReference' | 'List', string]> = [
      ['DocumentReference', '_sort=_id&_count=4&_offset=5'],
      ['DocumentReference', '_sort=-_lastUpdated,_id&_count=6&_offset=3'],
      ['DocumentReference', 'type=11488-4,34133-9&_sort=date&_count=5&_offset=2'],
      ['DocumentReference', `type=urn:oid:2.999.4.4|${localType}&_count=3`],
      ['DocumentReference', 'type:not=http://loinc.org|34133-9&type=http://loinc.org|&_count=3'],
      ['DocumentReference', `_summary=count&type=2.999.4.4|${localType}`],
      ['DocumentReference', 'security-label=http://terminology.hl7.org/CodeSystem/v3-Confidentiality|V,R&security-label:not=N&_count=3'],
      ['DocumentReference', 'format=http://ihe.net/fhir/ihe.formatcode.fhir/CodeSystem/formatcode|urn:ihe:iti:xds:2017:mimeTypeSufficient&_count=3'],
      ['DocumentReference', 'status:not=current&category=http://loinc.org|34133-9'],
      ['DocumentReference', `date=ge${registered[12]}&_lastUpdated=ne${registered[29]}&_count=3`],
      ['DocumentReference', `_id=${submitted[3]},${submitted[17]},xds-nothing`],
      ['List', '_sort=date,-_id&_count=6'],
      // By the instant each submission time (of any precision) begins, on its indexed column; a page reads its own rows.
      ['List', '_sort=-date&_count=2&_offset=1'],
      ['List', '_sort=date&_count=3&_offset=2'],
      ['List', 'date=ge2026-11-20&_sort=-date&_count=2'],
      ['List', 'date=le2026-11-20T10:19:59.5Z&date=ge2026-11&code=submissionset&_count=3'],
    ];
    before = await rowsRead();
    const answers = await Promise.all(checks.map(check));
    // Every search reads the rows it returns, no more.
    expect((await rowsRead()) - before).toBe(answers.reduce((n, a) => n + a.ids.length, 0));

    // Across the tenant, each patient's entries are read as the caller may: an integration reads only those of patients who consented.
    const query = `type=urn:oid:2.999.4.4|${localType}&_sort=_id&_count=3&_offset=2`;
    before = await rowsRead();
    expect(await answer('DocumentReference', query)).toMatchObject(expected('DocumentReference', `patient=${patient}&${query}`));
    expect((await rowsRead()) - before).toBe(3);
    const integration = await t.token({ roles: ['integration'], sub: 'registry-reader' });
    const lists = `code=submissionset&_lastUpdated=ge${start}&_count=100`;
    expect((await answer('List', lists, integration)).total).toBe(0);
    expect(
      (await t.graphql(`mutation($p: ID!) { grantConsent(patientId: $p, purpose: DATA_SHARING) { granted } }`, { p: patient })).body.errors,
    ).toBeUndefined();
    expect((await answer('List', lists, integration)).ids).toEqual(all.List.map((l: any) => l.id));
  });

  it("merges a patient's registry documents and clinical notes into one order, decrypting only the page's notes", async () => {
    expect((await provide({ docUniqueId: uid(), document: Buffer.from('merged') })).status).toBe(200);
    // Two notes, one older and one newer than the registry's documents.
    for (const authoredAt of ['2026-11-22T10:00:00Z', new Date(Date.now() + 3_600_000).toISOString()]) {
      const note = { note: { title: 'Progress note', note_type: { code: '11506-3' }, authored_at: authoredAt, body: 'merged' } };
      expect((await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'clinical_note.v1', ehrId: 'ehr-p-1001', content: note } })).status).toBe(
        201,
      );
    }
    const ids = async (query: string) => {
      const res = await fhir('GET', `/DocumentReference?patient=p-1001&${query}`);
      expect(res.status).toBe(200);
      const found: string[] = (res.body.entry ?? []).map((e: any) => e.resource.id);
      return { total: res.body.total as number, ids: found };
    };
    for (const sort of ['-date', '_lastUpdated']) {
      const all = await ids(`_sort=${sort}&_count=100`);
      expect(all.ids.some((id) => id.startsWith('xds-'))).toBe(true);
      expect(all.ids.some((id) => !id.startsWith('xds-'))).toBe(true);
      expect(all.total).toBe(all.ids.length);
      const paged: string[] = [];
      for (let offset = 0; offset < all.total; offset += 2) {
        const page = await ids(`_sort=${sort}&_count=2&_offset=${offset}`);
        expect(page.total).toBe(all.total);
        paged.push(...page.ids);
      }
      expect(paged).toEqual(all.ids);
    }
    const firstNote = (await ids('_sort=-date&_count=100')).ids.findIndex((id) => !id.startsWith('xds-'));
    const before = await compositionDecrypts(t);
    const page = await ids(`_sort=-date&_count=1&_offset=${firstNote}`);
    expect(page.ids[0].startsWith('xds-')).toBe(false);
    expect((await compositionDecrypts(t)) - before).toBe(1);
  });

  it('serves the clinical-note DocumentReferences beside the registry ones, told apart by category', async () => {
    const uniqueId = uid();
    await provide({ docUniqueId: uniqueId, document: Buffer.from('registry') });
    const notes = await findDocs('category=clinical-note&_count=100');
    expect(notes.every((d: any) => !d.id.startsWith('xds-'))).toBe(true);
    const registry = await findDocs('patient=p-1001&category=http://loinc.org|34133-9&_count=100');
    expect(registry.every((d: any) => d.id.startsWith('xds-'))).toBe(true);
    expect(byUniqueId(registry, uniqueId)).toBeDefined();
  });

  it("keeps tenants apart: another tenant's token finds, reads and retrieves nothing, and cannot submit for the patient", async () => {
    const docUniqueId = uid();
    const stored = await provide({ docUniqueId, document: Buffer.from('demo only') });
    const [listPath, docPath, binaryPath] = stored.body.entry.map((e: any) => e.response.location.replace(/\/_history\/1$/, ''));

    expect(byUniqueId(await findDocs('patient=p-1001', acme), docUniqueId)).toBeUndefined();
    expect(byUniqueId(await findDocs('_count=100', acme), docUniqueId)).toBeUndefined();
    expect((await fhir('GET', '/List?patient=p-1001&code=submissionset', { token: acme })).body.total).toBe(0);
    for (const path of [docPath, listPath, binaryPath]) expect((await fhir('GET', `/${path}`, { token: acme, accept: '*/*' })).status).toBe(404);

    const refused = await provide({ docUniqueId: uid(), document: Buffer.from('x') }, acme);
    expect(refused.status).toBe(400);
    expect(issueCodes(refused.body)).toContain('XDSUnknownPatientId');
    // acme's own patient is fine, and stays acme's.
    const own = uid();
    expect((await provide({ docUniqueId: own, patient: 'p-2001', document: Buffer.from('acme') }, acme)).status).toBe(200);
    expect(byUniqueId(await findDocs('patient=p-2001', acme), own)).toBeDefined();
    expect(byUniqueId(await findDocs('_count=100'), own)).toBeUndefined();
  });

  it('refuses bad bundles with a 4xx OperationOutcome and stores nothing of them', async () => {
    const expectRefused = async (status: number, o: BundleOptions, code?: string, bundle = provideBundle(o)) => {
      const res = await fhir('POST', '', { body: bundle });
      expect(res.status).toBe(status);
      expect(res.body.resourceType).toBe('OperationOutcome');
      validateFhir(res.body);
      if (code) expect(issueCodes(res.body)).toContain(code);
      expect(byUniqueId(await findDocs('patient=p-1001&_count=100'), o.docUniqueId)).toBeUndefined();
      expect(await xdsFind('p-1001')).not.toContain(o.docUniqueId);
    };
    const document = Buffer.from('bad');
    await expectRefused(400, { docUniqueId: uid(), patient: 'p-nobody', document }, 'XDSUnknownPatientId');
    await expectRefused(
      400,
      { docUniqueId: uid(), document, doc: (d) => (d.content[0].attachment.hash = sha1(Buffer.from('other')).toString('base64')) },
      'XDSRepositoryMetadataError',
    );
    await expectRefused(400, { docUniqueId: uid(), document, doc: (d) => delete d.type }, 'XDSRegistryMetadataError');
    await expectRefused(400, { docUniqueId: uid(), document, doc: (d) => (d.subject = { reference: 'Patient/p-1002' }) }, 'XDSPatientIdDoesNotMatch');
    // Not a transaction, and a Binary no DocumentReference names.
    const notTransaction = { ...provideBundle({ docUniqueId: uid(), document }), type: 'document' };
    await expectRefused(400, { docUniqueId: notTransaction.entry[1].resource.masterIdentifier.value.slice(8), document }, undefined, notTransaction);
    const orphan = provideBundle({ docUniqueId: uid(), document });
    orphan.entry.push({
      fullUrl: `urn:uuid:${randomUUID()}`,
      resource: { resourceType: 'Binary', contentType: 'text/plain', data: 'eA==' },
      request: { method: 'POST', url: 'Binary' },
    });
    await expectRefused(400, { docUniqueId: orphan.entry[1].resource.masterIdentifier.value.slice(8), document }, undefined, orphan);

    // All or nothing: a good document beside a bad one is not stored either.
    const both = provideBundle({ docUniqueId: uid(), document });
    const second = structuredClone(both.entry[1]);
    second.fullUrl = `urn:uuid:${randomUUID()}`;
    second.resource.masterIdentifier.value = `urn:oid:${uid()}`;
    second.resource.content[0].attachment = {
      ...second.resource.content[0].attachment,
      url: undefined,
      data: document.toString('base64'),
      hash: undefined,
      creation: 'yesterday',
    };
    both.entry.push(second);
    both.entry[0].resource.entry.push({ item: { reference: second.fullUrl } });
    await expectRefused(400, { docUniqueId: both.entry[1].resource.masterIdentifier.value.slice(8), document }, undefined, both);

    // A uniqueId the registry holds is a conflict.
    const taken = uid();
    expect((await provide({ docUniqueId: taken, document })).status).toBe(200);
    const again = await provide({ docUniqueId: taken, document });
    expect(again.status).toBe(409);
    expect(issueCodes(again.body)).toContain('XDSDuplicateUniqueIdInRegistry');

    expect(await audited()).toContain('ITI-65:refuse');
  });

  it('declares MHD in the CapabilityStatement', async () => {
    const res = await fetch(`${t.url}/fhir/R4/metadata`);
    const statement: any = await res.json();
    validateFhir(statement);
    const rest = statement.rest[0];
    expect(rest.interaction.map((i: any) => i.code)).toEqual(['transaction']);
    const byType = Object.fromEntries(rest.resource.map((r: any) => [r.type, r]));
    expect(byType.Binary.interaction.map((i: any) => i.code)).toEqual(['read', 'vread', 'history-instance']);
    expect(byType.List.searchParam.map((p: any) => p.name)).toEqual(expect.arrayContaining(['patient', 'code', 'status']));
    expect(byType.DocumentReference.searchParam.map((p: any) => p.name)).toEqual(expect.arrayContaining(['patient', 'status', 'security-label', 'format']));
  });
});
