import { ROLES, type Identity, type Role } from '../common/auth/principal';
import * as ehr from '../subgraphs/ehr/policy/rules';
import * as messaging from '../subgraphs/messaging/policy/rules';
import { startTestPlatform, backendName, type TestPlatform, type TestResponse } from './harness';
import { ENCOUNTER, envelope, NOTE, ORDER, VITALS } from './ehr-fixtures';

/**
 * The whole authorization matrix, end to end: every role (and a patient on
 * someone else's record) × every area × read/write × the patient's
 * data-sharing consent, on every surface where the area is reachable
 * (GraphQL, /api/ehr, /v1, FHIR R4, openEHR), against the decision of the
 * policy modules' tables. Allowed must answer 2xx; denied 404 where the
 * table hides the record, else 403 (GraphQL: FORBIDDEN / NOT_FOUND or null).
 */

const PATIENT = 'p-1001';
const EHR_ID = 'ehr-p-1001';
const VARS = { date: '2026-12-01', time: '09:30' };

interface Caller {
  name: string;
  identity: Identity;
  token: string;
}

/** What the policy says; `list` asks for the caller's tenant-wide view (their own patient for a patient). */
type Expectation = { allowed: boolean; hide: boolean };

type Surface = 'graphql' | 'rest';

interface Case {
  name: string;
  surface: Surface;
  expect: (caller: Caller, consent: boolean) => Expectation;
  call: (caller: Caller) => Promise<TestResponse>;
  /** GraphQL: the root field whose value must be non-null when allowed. */
  field?: string;
}

const byEhr =
  (action: ehr.Action, area: ehr.AccessArea) =>
  (caller: Caller, consent: boolean): Expectation =>
    ehr.decide(caller.identity, action, area, { patientId: PATIENT, consents: { data_sharing: consent } });

/** A tenant-wide read: the caller's own patient when the table limits them to it. */
const byEhrList =
  (area: ehr.AccessArea) =>
  (caller: Caller): Expectation => {
    let own: string | undefined;
    try {
      own = ehr.recordScope(caller.identity);
    } catch {
      return { allowed: false, hide: false };
    }
    return ehr.decide(caller.identity, 'read', area, own === undefined ? {} : { patientId: own });
  };

const byMessaging =
  (action: messaging.Action, area: messaging.MessagingArea, patient = true) =>
  (caller: Caller): Expectation => {
    const allowed = messaging.allowed(caller.identity, action, area, patient ? PATIENT : undefined);
    // The caller reaches the area on their own patient only: another patient's data looks absent.
    const ownOnly = patient && caller.identity.patientId !== undefined && messaging.allowed(caller.identity, action, area, caller.identity.patientId);
    return { allowed, hide: !allowed && ownOnly };
  };

const byMessagingList =
  (area: messaging.MessagingArea) =>
  (caller: Caller): Expectation => {
    try {
      messaging.readScope(caller.identity, area);
      return { allowed: true, hide: false };
    } catch {
      return { allowed: false, hide: false };
    }
  };

/** Both must allow; a denial hides the record when either hides it. */
const both =
  (a: (c: Caller, consent: boolean) => Expectation, b: (c: Caller, consent: boolean) => Expectation) =>
  (caller: Caller, consent: boolean): Expectation => {
    const x = a(caller, consent);
    if (!x.allowed) return x;
    return b(caller, consent);
  };

/** FHIR refuses (403) a caller who reaches no patient records before the per-patient decision, which would hide the record. */
const onFhir = (cases: Case[]): Case[] =>
  cases.map((c) =>
    c.name.includes('/fhir/R4/')
      ? { ...c, expect: (caller, consent) => (ehr.reachesRecords(caller.identity) ? c.expect(caller, consent) : { allowed: false, hide: false }) }
      : c,
  );

describe(`authorization matrix on every surface (${backendName})`, () => {
  let t: TestPlatform;
  let admin: string;
  const callers: Caller[] = [];
  const ids: Record<string, string> = {};
  let serial = 0;
  let fhirPatient: unknown;

  const gql =
    (query: string, variables: Record<string, unknown> = {}) =>
    (caller: Caller) =>
      t.graphql(query, variables, { token: caller.token });
  const rest =
    (method: string, path: string | (() => string), body?: unknown, headers: Record<string, string> = {}) =>
    (caller: Caller) =>
      t.request(method, typeof path === 'string' ? path : path(), {
        token: caller.token,
        body: typeof body === 'function' ? body() : body,
        headers: { 'x-tenant-id': 'demo', ...headers },
      });
  const asAdmin = async (query: string, variables: Record<string, unknown> = {}) => {
    const res = await t.graphql(query, variables, { token: admin });
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  };
  const DIRECTORY = { _type: 'FOLDER', archetype_node_id: 'openEHR-EHR-FOLDER.generic.v1', name: { value: 'root' } };

  const CONTENT: Record<ehr.DataArea, { templateId: string; content: unknown; fhirType: string }> = {
    observation: { templateId: 'vital_signs.v1', content: VITALS, fhirType: 'Observation' },
    encounter: { templateId: 'encounter.v1', content: ENCOUNTER, fhirType: 'Encounter' },
    order: { templateId: 'medication_order.v1', content: ORDER, fhirType: 'MedicationRequest' },
    document: { templateId: 'clinical_note.v1', content: NOTE('matrix'), fhirType: 'DocumentReference' },
  };

  const cases: Case[] = onFhir([
    // Demographics
    { name: 'GraphQL patient', surface: 'graphql', field: 'patient', expect: byEhr('read', 'demographics'), call: gql(`{ patient(id: "${PATIENT}") { id } }`) },
    { name: 'GET /api/ehr/patients/{id}', surface: 'rest', expect: byEhr('read', 'demographics'), call: rest('GET', `/api/ehr/patients/${PATIENT}`) },
    { name: 'GET /fhir/R4/Patient/{id}', surface: 'rest', expect: byEhr('read', 'demographics'), call: rest('GET', `/fhir/R4/Patient/${PATIENT}`) },
    { name: 'GET /openehr/v1/ehr/{ehrId}', surface: 'rest', expect: byEhr('read', 'demographics'), call: rest('GET', `/openehr/v1/ehr/${EHR_ID}`) },
    // The EHR's directory is the EHR record's: read and written under demographics.
    {
      name: 'GET /openehr/v1/ehr/{ehrId}/directory',
      surface: 'rest',
      expect: byEhr('read', 'demographics'),
      call: rest('GET', `/openehr/v1/ehr/${EHR_ID}/directory`),
    },
    {
      name: 'PUT /openehr/v1/ehr/{ehrId}/directory',
      surface: 'rest',
      expect: byEhr('write', 'demographics'),
      call: async (c) => {
        const current = await t.request('GET', `/openehr/v1/ehr/${EHR_ID}/directory`, { token: admin });
        return rest('PUT', `/openehr/v1/ehr/${EHR_ID}/directory`, DIRECTORY, { 'if-match': current.headers.get('etag')! })(c);
      },
    },
    {
      name: 'GraphQL patients (list)',
      surface: 'graphql',
      field: 'patients',
      expect: (c) => (ehr.can(c.identity, 'listPatients') ? byEhrList('demographics')(c) : { allowed: false, hide: false }),
      call: gql('{ patients { pagination { total } } }'),
    },
    {
      name: 'PUT /fhir/R4/Patient/{id}',
      surface: 'rest',
      // A whole resource: more than the contact details a patient may change.
      expect: both(byEhr('write', 'demographics'), (c) => ({ allowed: ehr.can(c.identity, 'editAllDemographics'), hide: false })),
      call: rest('PUT', `/fhir/R4/Patient/${PATIENT}`, () => fhirPatient, { 'content-type': 'application/fhir+json' }),
    },
    {
      name: 'POST /fhir/R4/Patient (register)',
      surface: 'rest',
      expect: (c) => (ehr.can(c.identity, 'registerPatients') ? ehr.decide(c.identity, 'write', 'demographics') : { allowed: false, hide: false }),
      call: rest(
        'POST',
        '/fhir/R4/Patient',
        { resourceType: 'Patient', name: [{ family: 'Matrix', given: ['Max'] }] },
        { 'content-type': 'application/fhir+json' },
      ),
    },
    {
      name: 'GraphQL updatePatient',
      surface: 'graphql',
      field: 'updatePatient',
      expect: byEhr('write', 'demographics'),
      call: gql(`mutation { updatePatient(id: "${PATIENT}", input: { email: "anna.devries@example.org" }) { id } }`),
    },
    // Appointments
    {
      name: 'GraphQL appointment',
      surface: 'graphql',
      field: 'appointment',
      expect: byEhr('read', 'appointment'),
      call: gql('{ appointment(id: "appt-1001") { id } }'),
    },
    { name: 'GET /fhir/R4/Appointment/{id}', surface: 'rest', expect: byEhr('read', 'appointment'), call: rest('GET', '/fhir/R4/Appointment/appt-1001') },
    { name: 'GET /v1/appointments (list)', surface: 'rest', expect: byEhrList('appointment'), call: rest('GET', '/v1/appointments') },
    {
      name: 'GraphQL updateAppointmentStatus',
      surface: 'graphql',
      field: 'updateAppointmentStatus',
      expect: byEhr('write', 'appointment'),
      call: gql('mutation { updateAppointmentStatus(id: "appt-1001", status: "confirmed") { id } }'),
    },
    // Consents
    {
      name: 'GraphQL patient.consents',
      surface: 'graphql',
      field: 'patient',
      expect: both(byEhr('read', 'demographics'), byEhr('read', 'consent')),
      call: gql(`{ patient(id: "${PATIENT}") { consents { purpose } } }`),
    },
    {
      name: 'GraphQL grantConsent',
      surface: 'graphql',
      field: 'grantConsent',
      expect: byEhr('write', 'consent'),
      call: gql(`mutation { grantConsent(patientId: "${PATIENT}", purpose: RESEARCH) { granted } }`),
    },
    // Clinical data areas
    ...ehr.DATA_AREAS.flatMap((area): Case[] => [
      {
        name: `GET /api/ehr/compositions/{uid} (${area})`,
        surface: 'rest',
        expect: byEhr('read', area),
        call: rest('GET', () => `/api/ehr/compositions/${encodeURIComponent(ids[area])}`),
      },
      {
        name: `GET /openehr/v1/…/composition/{uid} (${area})`,
        surface: 'rest',
        expect: byEhr('read', area),
        call: rest('GET', () => `/openehr/v1/ehr/${EHR_ID}/composition/${ids[area]}`),
      },
      {
        name: `GET /fhir/R4/${CONTENT[area].fhirType}/{id} (${area})`,
        surface: 'rest',
        expect: byEhr('read', area),
        call: rest('GET', () => `/fhir/R4/${CONTENT[area].fhirType}/${ids[`fhir-${area}`]}`),
      },
      {
        name: `GraphQL composition (${area})`,
        surface: 'graphql',
        field: 'composition',
        expect: byEhr('read', area),
        call: (c) => gql('query($u: ID!) { composition(uid: $u) { uid } }', { u: ids[area] })(c),
      },
      {
        name: `POST /api/ehr/compositions (${area})`,
        surface: 'rest',
        expect: byEhr('write', area),
        call: rest('POST', '/api/ehr/compositions', { templateId: CONTENT[area].templateId, ehrId: EHR_ID, content: CONTENT[area].content }),
      },
      {
        name: `POST /openehr/v1/…/composition (${area})`,
        surface: 'rest',
        expect: byEhr('write', area),
        call: rest('POST', `/openehr/v1/ehr/${EHR_ID}/composition`, envelope(CONTENT[area].content, CONTENT[area].templateId)),
      },
    ]),
    // Messaging
    { name: 'GET /v1/messages/{id}', surface: 'rest', expect: byMessaging('read', 'message'), call: rest('GET', () => `/v1/messages/${ids.message}`) },
    {
      name: 'GraphQL message',
      surface: 'graphql',
      field: 'message',
      expect: byMessaging('read', 'message'),
      call: (c) => gql('query($id: ID!) { message(id: $id) { id body } }', { id: ids.message })(c),
    },
    { name: 'GET /v1/messages (list)', surface: 'rest', expect: byMessagingList('message'), call: rest('GET', '/v1/messages') },
    {
      name: 'POST /v1/messages',
      surface: 'rest',
      expect: byMessaging('write', 'message', false),
      call: rest('POST', '/v1/messages', { patientId: PATIENT, templateId: 'appointment-reminder', channel: 'email', variables: VARS }),
    },
    {
      name: 'GraphQL sendMessage',
      surface: 'graphql',
      field: 'sendMessage',
      expect: byMessaging('write', 'message', false),
      call: gql(
        `mutation($v: JSONObject) { sendMessage(input: { patientId: "${PATIENT}", templateId: "appointment-reminder", channel: "email", variables: $v }) { id } }`,
        { v: VARS },
      ),
    },
    {
      name: 'GET /v1/patients/{id} (demographics and preferences)',
      surface: 'rest',
      expect: both(byEhr('read', 'demographics'), byMessaging('read', 'preferences')),
      call: rest('GET', `/v1/patients/${PATIENT}`),
    },
    {
      name: 'PATCH /v1/patients/{id}/preferences',
      surface: 'rest',
      expect: byMessaging('write', 'preferences'),
      call: rest('PATCH', `/v1/patients/${PATIENT}/preferences`, { language: 'en' }),
    },
    { name: 'GET /v1/templates', surface: 'rest', expect: byMessaging('read', 'template', false), call: rest('GET', '/v1/templates') },
    {
      name: 'GraphQL createTemplate',
      surface: 'graphql',
      field: 'createTemplate',
      expect: byMessaging('write', 'template', false),
      call: (c) =>
        gql('mutation($id: ID!) { createTemplate(id: $id, input: { name: "Matrix", channel: "sms", body: "Hello", variables: [] }) { id } }', {
          id: `matrix-${++serial}`,
        })(c),
    },
    { name: 'GET /v1/webhooks', surface: 'rest', expect: byMessaging('read', 'webhook', false), call: rest('GET', '/v1/webhooks') },
    {
      name: 'POST /v1/webhooks',
      surface: 'rest',
      expect: byMessaging('write', 'webhook', false),
      call: rest('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/matrix', events: ['message.failed'], secret: 'a-matrix-secret-1234' }),
    },
  ]);

  beforeAll(async () => {
    t = await startTestPlatform({ WEBHOOK_ALLOW_INSECURE: 'true' });
    admin = await t.token({ sub: 'matrix-admin' });
    const people: Array<[string, Role, string | undefined]> = [
      ...ROLES.map((role): [string, Role, string | undefined] => [role, role, role === 'patient' ? PATIENT : undefined]),
      ['patient of another record', 'patient', 'p-1002'],
    ];
    for (const [name, role, patientId] of people) {
      const identity: Identity = { sub: `matrix-${name.replace(/ /g, '-')}`, tenantId: 'demo', roles: [role], patientId };
      callers.push({ name, identity, token: await t.token({ sub: identity.sub, roles: [role], patientId }) });
    }
    for (const area of ehr.DATA_AREAS) {
      const res = await t.request('POST', '/api/ehr/compositions', {
        token: admin,
        body: { templateId: CONTENT[area].templateId, ehrId: EHR_ID, content: CONTENT[area].content },
      });
      expect(res.status).toBe(201);
      ids[area] = res.body.uid;
      const search = await t.request('GET', `/fhir/R4/${CONTENT[area].fhirType}?patient=${PATIENT}`, { token: admin });
      ids[`fhir-${area}`] = search.body.entry.find((e: any) => e.resource.id.startsWith(res.body.uid.split('::')[0])).resource.id;
    }
    fhirPatient = (await t.request('GET', `/fhir/R4/Patient/${PATIENT}`, { token: admin })).body;
    expect((await t.request('POST', `/openehr/v1/ehr/${EHR_ID}/directory`, { token: admin, body: DIRECTORY })).status).toBe(201);
    const sent = await t.request('POST', '/v1/messages', {
      token: admin,
      body: { patientId: PATIENT, templateId: 'appointment-reminder', channel: 'email', variables: VARS },
    });
    expect(sent.status).toBe(201);
    ids.message = sent.body.id;
  });
  afterAll(() => t?.stop());

  function check(testCase: Case, caller: Caller, consent: boolean, res: TestResponse): string | undefined {
    const want = testCase.expect(caller, consent);
    if (testCase.surface === 'graphql') {
      const error = res.body?.errors?.[0]?.extensions?.code;
      const value = res.body?.data?.[testCase.field!];
      if (want.allowed) return error || value === null || value === undefined ? `expected data, got ${error ?? 'null'}` : undefined;
      if (error === undefined && value !== null && value !== undefined) return 'expected a denial, got data';
      if (error !== undefined && !['FORBIDDEN', 'NOT_FOUND'].includes(error)) return `expected FORBIDDEN or NOT_FOUND, got ${error}`;
      if (want.hide && error === 'FORBIDDEN') return 'expected the record to look absent, got FORBIDDEN';
      return undefined;
    }
    if (want.allowed) return res.status >= 200 && res.status < 300 ? undefined : `expected 2xx, got ${res.status} ${res.text.slice(0, 160)}`;
    const status = want.hide ? 404 : 403;
    return res.status === status ? undefined : `expected ${status}, got ${res.status} ${res.text.slice(0, 160)}`;
  }

  it.each([false, true])('matches the policy tables with data-sharing consent %s', async (consent) => {
    await asAdmin(`mutation { ${consent ? 'grantConsent' : 'revokeConsent'}(patientId: "${PATIENT}", purpose: DATA_SHARING) { granted } }`);
    const mismatches: string[] = [];
    let checked = 0;
    for (const caller of callers) {
      for (const testCase of cases) {
        const problem = check(testCase, caller, consent, await testCase.call(caller));
        checked += 1;
        if (problem) mismatches.push(`${caller.name} × ${testCase.name}: ${problem}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(checked).toBe(callers.length * cases.length);
  });

  it('accepts a platform_admin token that names no tenant: it manages tenants in the platform scope and reaches no tenant data', async () => {
    const token = await t.token({ sub: 'platform-ops', roles: ['platform_admin'], tenants: [] });
    const res = await t.request('GET', '/v1/templates', { token });
    expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await t.graphql('{ organizations { data { id } } }', undefined, { token })).body.errors).toBeUndefined();
    // Any other role still has to name a tenant.
    const admin = await t.request('GET', '/v1/templates', { token: await t.token({ roles: ['admin'], tenants: [] }) });
    expect([admin.status, admin.body.error.code]).toEqual([400, 'TENANT_REQUIRED']);
  });

  it('[SEC-006] follows the tenant overrides of the configurable roles', async () => {
    const overrides: ehr.PolicyOverride[] = [
      { role: 'receptionist', area: 'appointment', canRead: true, canWrite: false },
      { role: 'nurse', area: 'order', canRead: true, canWrite: true },
      { role: 'integration', area: 'demographics', canRead: false, canWrite: false },
    ];
    for (const o of overrides) {
      await asAdmin(
        `mutation { setAccessPolicy(role: ${o.role.toUpperCase()}, area: ${o.area.toUpperCase()}, canRead: ${o.canRead}, canWrite: ${o.canWrite}) { role } }`,
      );
    }
    const probes: Array<[string, ehr.Action, ehr.AccessArea, (c: Caller) => Promise<TestResponse>]> = [
      ['receptionist', 'write', 'appointment', gql('mutation { updateAppointmentStatus(id: "appt-1001", status: "confirmed") { id } }')],
      ['nurse', 'write', 'order', rest('POST', '/api/ehr/compositions', { templateId: 'medication_order.v1', ehrId: EHR_ID, content: ORDER })],
      ['integration', 'read', 'demographics', rest('GET', `/api/ehr/patients/${PATIENT}`)],
    ];
    for (const [role, action, area, call] of probes) {
      const caller = callers.find((c) => c.name === role)!;
      const want = ehr.decide(caller.identity, action, area, { patientId: PATIENT }, overrides);
      const res = await call(caller);
      const ok = res.body?.errors ? false : res.status >= 200 && res.status < 300;
      expect({ role, action, area, allowed: ok }).toEqual({ role, action, area, allowed: want.allowed });
    }
  });
});
