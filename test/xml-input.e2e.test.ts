import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { startTestPlatform, backendName, type TestPlatform } from './harness';

/**
 * Hostile XML on every endpoint that reads XML a client sends: the XDS.b
 * registry and repository (SOAP 1.2), the openEHR OPT upload and canonical XML
 * compositions (POST and PUT). Entity declarations (external, parameter,
 * exponential, oversized) and very deep nesting are bad input: 400 in the
 * endpoint's own error format, and nothing is stored. Each attack is the
 * endpoint's valid document with the attack added, and that document without
 * it is accepted, so "nothing stored" is the attack's doing.
 */
const OPENEHR = join(__dirname, 'fixtures/openehr/ehrbase-sdk');
const OPT = readFileSync(join(OPENEHR, 'operationaltemplate/ehrbase_multi_occurrence.de.opt'), 'utf8');
const OPT_ID = 'ehrbase_multi_occurrence.de.v1';
const CANONICAL = JSON.parse(readFileSync(join(OPENEHR, 'composition/canonical_json/multi_occurrence.json'), 'utf8'));
const ITI41 = readFileSync(join(__dirname, 'fixtures/xds/iti41-provide-and-register.xml'), 'utf8');
const CCD = readFileSync(join(__dirname, 'fixtures/xds/ccd.xml'));
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const SUCCESS = 'urn:oasis:names:tc:ebxml-regrep:ResponseStatusType:Success';
const FIND_DOCUMENTS = 'urn:uuid:14d4debf-8f97-4251-9a74-a90016b0af0d';
const PATIENT = '2.999.1.1';
const uid = () => `2.999.8.${Date.now()}.${Math.floor(Math.random() * 1e6)}`;

/** Where an attack goes into a document: a DOCTYPE in its prolog, and text that replaces one of its text values. */
interface Attack {
  doctype?: string;
  text: string;
}
const ATTACKS: Array<[string, Attack]> = [
  ['an external entity (XXE)', { doctype: '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>', text: '&e;' }],
  ['a parameter entity', { doctype: '<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/evil.dtd"> %p;]>', text: 'x' }],
  [
    'exponential internal entities (billion laughs)',
    {
      doctype: `<!DOCTYPE x [<!ENTITY l0 "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`).join('')}]>`,
      text: '&l9;',
    },
  ],
  ['an oversized internal entity', { doctype: `<!DOCTYPE x [<!ENTITY big "${'A'.repeat(500_000)}">]>`, text: '&big;' }],
  ['100,000 nested elements', { text: `${'<n>'.repeat(100_000)}${'</n>'.repeat(100_000)}` }],
];

/** The document with the attack: its DOCTYPE after the XML declaration, its text in place of `value`. */
function attacked(document: string, value: string, attack: Attack): string {
  if (!document.includes(value)) throw new Error(`the document has no ${value}`);
  const withText = document.replace(value, attack.text);
  return attack.doctype ? withText.replace(/^(\uFEFF?<\?xml[^>]*\?>)?/, (declaration) => `${declaration}${attack.doctype}`) : withText;
}

const soapXml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true, parseTagValue: false });

describe(`hostile XML input (${backendName})`, () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform();
    const uploaded = await t.request('POST', '/openehr/v1/definition/template/adl1.4', { rawBody: OPT, headers: { 'content-type': 'application/xml' } });
    expect(uploaded.status).toBe(201);
  });
  afterAll(() => t?.stop());

  describe('XDS.b: a SOAP Sender fault with HTTP 400', () => {
    const post = async (endpoint: 'registry' | 'repository', body: string) => {
      const res = await fetch(`${t.url}/xds/${endpoint}`, {
        method: 'POST',
        headers: { 'content-type': 'application/soap+xml; charset=UTF-8', authorization: `Bearer ${await t.token()}` },
        body,
      });
      const text = await res.text();
      return { status: res.status, body: soapXml.parse(text).Envelope?.Body };
    };
    /** ITI-41 of a small document for p-1001, with a new document uniqueId. */
    const provide = (docUniqueId: string) =>
      ITI41.replace(/\{\{PATIENT_ID\}\}/g, `p-1001^^^&amp;${PATIENT}&amp;ISO`)
        .replace('{{DOC_UNIQUE_ID}}', docUniqueId)
        .replace('{{SET_UNIQUE_ID}}', uid())
        .replace('{{DOCUMENT}}', CCD.toString('base64'));
    /** ITI-42 of the same metadata, as another repository registers it. */
    const register = (docUniqueId: string) => {
      const metadata = provide(docUniqueId)
        .replace(/[\s\S]*(<lcm:SubmitObjectsRequest[\s\S]*<\/lcm:SubmitObjectsRequest>)[\s\S]*/, '$1')
        .replace(
          '<rim:Slot name="languageCode">',
          `<rim:Slot name="hash"><rim:ValueList><rim:Value>${'a'.repeat(40)}</rim:Value></rim:ValueList></rim:Slot><rim:Slot name="size"><rim:ValueList><rim:Value>12</rim:Value></rim:ValueList></rim:Slot><rim:Slot name="repositoryUniqueId"><rim:ValueList><rim:Value>1.2.3.4.5</rim:Value></rim:ValueList></rim:Slot><rim:Slot name="languageCode">`,
        );
      return (
        `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${SOAP12}" xmlns:a="http://www.w3.org/2005/08/addressing"><s:Header>` +
        `<a:Action s:mustUnderstand="true">urn:ihe:iti:2007:RegisterDocumentSet-b</a:Action><a:MessageID>urn:uuid:${randomUUID()}</a:MessageID></s:Header><s:Body>${metadata}</s:Body></s:Envelope>`
      );
    };
    const registeredIds = async (): Promise<string[]> => {
      const query =
        `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${SOAP12}" xmlns:a="http://www.w3.org/2005/08/addressing"><s:Header>` +
        `<a:Action s:mustUnderstand="true">urn:ihe:iti:2007:RegistryStoredQuery</a:Action><a:MessageID>urn:uuid:${randomUUID()}</a:MessageID></s:Header><s:Body>` +
        `<query:AdhocQueryRequest xmlns:query="urn:oasis:names:tc:ebxml-regrep:xsd:query:3.0" xmlns:rim="urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0">` +
        `<query:ResponseOption returnComposedObjects="true" returnType="LeafClass"/><rim:AdhocQuery id="${FIND_DOCUMENTS}">` +
        `<rim:Slot name="$XDSDocumentEntryPatientId"><rim:ValueList><rim:Value>'p-1001^^^&amp;${PATIENT}&amp;ISO'</rim:Value></rim:ValueList></rim:Slot>` +
        `<rim:Slot name="$XDSDocumentEntryStatus"><rim:ValueList><rim:Value>('urn:oasis:names:tc:ebxml-regrep:StatusType:Approved')</rim:Value></rim:ValueList></rim:Slot>` +
        `</rim:AdhocQuery></query:AdhocQueryRequest></s:Body></s:Envelope>`;
      const answer = await post('registry', query);
      expect(answer.status).toBe(200);
      return JSON.stringify(answer.body.AdhocQueryResponse).match(/2\.999\.8\.[\d.]+/g) ?? [];
    };

    it.each([
      ['registry', register],
      ['repository', provide],
    ] as const)('/xds/%s accepts the plain request (the control)', async (endpoint, request) => {
      const docUniqueId = uid();
      const accepted = await post(endpoint, request(docUniqueId));
      expect(accepted.status).toBe(200);
      expect(accepted.body.RegistryResponse['@status']).toBe(SUCCESS);
      expect(await registeredIds()).toContain(docUniqueId);
    });

    describe.each([
      ['registry', register],
      ['repository', provide],
    ] as const)('/xds/%s', (endpoint, request) => {
      it.each(ATTACKS)('refuses %s', async (_what, attack) => {
        const docUniqueId = uid();
        const res = await post(
          endpoint,
          attacked(request(docUniqueId), '<rim:Value>en-US</rim:Value>', { ...attack, text: `<rim:Value>${attack.text}</rim:Value>` }),
        );
        expect(res.status).toBe(400);
        expect(res.body.Fault.Code.Value).toBe('soap:Sender');
        expect(res.body.Fault.Reason.Text['#text']).toMatch(/^The SOAP message is refused: /);
        expect(await registeredIds()).not.toContain(docUniqueId);
      });
    });
  });

  describe('openEHR: 400 VALIDATION_ERROR', () => {
    const xml = { 'content-type': 'application/xml' };
    const api = (method: string, path: string, options: Parameters<TestPlatform['request']>[2] = {}) => t.request(method, `/openehr/v1${path}`, options);
    const expectRefused = (res: Awaited<ReturnType<TestPlatform['request']>>) => {
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message).toMatch(/ refused: /);
    };

    describe('the OPT upload', () => {
      const optWithId = (id: string) => OPT.replace(`<value>${OPT_ID}</value>`, `<value>${id}</value>`);
      const stored = async (id: string) => (await api('GET', `/definition/template/adl1.4/${encodeURIComponent(id)}`)).status;

      it('accepts the plain template (the control)', async () => {
        const id = `xml_control_${randomUUID().slice(0, 8)}.v1`;
        expect((await api('POST', '/definition/template/adl1.4', { rawBody: optWithId(id), headers: xml })).status).toBe(201);
        expect(await stored(id)).toBe(200);
      });

      it.each(ATTACKS)('refuses %s', async (_what, attack) => {
        const id = `xml_attack_${randomUUID().slice(0, 8)}.v1`;
        const res = await api('POST', '/definition/template/adl1.4', {
          rawBody: attacked(optWithId(id), '<concept>', { ...attack, text: `<concept>${attack.text}` }),
          headers: xml,
        });
        expectRefused(res);
        expect(await stored(id)).toBe(404);
      });
    });

    describe('canonical XML compositions', () => {
      let good: string;
      let versioned: string;
      let version: string;
      const count = async () => (await t.request('GET', '/api/ehr/patients/p-1001/compositions?limit=1')).body.pagination.total;
      const composer = '<composer xsi:type="PARTY_IDENTIFIED"><name>';

      beforeAll(async () => {
        const created = await api('POST', '/ehr/ehr-p-1001/composition', { body: CANONICAL });
        expect(created.status).toBe(201);
        version = created.headers.get('etag')!.replace(/"/g, '');
        versioned = version.split('::')[0];
        good = (await api('GET', `/ehr/ehr-p-1001/composition/${version}`, { headers: { accept: 'application/xml' } })).text;
        expect(good).toContain(composer);
      });

      it('accepts the plain composition (the control)', async () => {
        const before = await count();
        expect((await api('POST', '/ehr/ehr-p-1001/composition', { rawBody: good, headers: xml })).status).toBe(201);
        expect(await count()).toBe(before + 1);
      });

      it.each(ATTACKS)('refuses %s on POST and PUT', async (_what, attack) => {
        const before = await count();
        const body = attacked(good, composer, { ...attack, text: `${composer}${attack.text}` });
        expectRefused(await api('POST', '/ehr/ehr-p-1001/composition', { rawBody: body, headers: xml }));
        expectRefused(await api('PUT', `/ehr/ehr-p-1001/composition/${versioned}`, { rawBody: body, headers: { ...xml, 'if-match': `"${version}"` } }));
        expect(await count()).toBe(before);
        expect((await api('GET', `/ehr/ehr-p-1001/composition/${versioned}`)).headers.get('etag')).toBe(`"${version}"`);
      });
    });
  });
});
