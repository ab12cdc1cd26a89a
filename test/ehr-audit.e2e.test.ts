import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import pg from 'pg';
import { chainedJson, type ChainedFields } from '../subgraphs/ehr/audit/chain';
import { eventually } from './messaging-helpers';
import { buildEhrSchema } from '../subgraphs/ehr';
import { NOTE, VITALS } from './ehr-fixtures';
import { provideBundle, uid } from './support/mhd-bundle';

/**
 * The clinical record's guarantees at the database: audit immutability, the
 * hash chain, "every mutation is audited", no plaintext at rest, and
 * row-level security as the second tenant wall.
 */
describe(`clinical record audit, encryption and isolation at the database (${backendName})`, () => {
  let t: TestPlatform;
  /** The external XDS repository publishPatientCcd sends to: a second CareGraph. */
  let repository: TestPlatform;
  let admin: string;
  const db = () => t.platform.db!;
  const gql = async (query: string, variables?: Record<string, unknown>, token = admin) => {
    const res = await t.graphql(query, variables, { token });
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  };
  const auditCount = async () => Number((await db().query<{ n: string }>('SELECT count(*) AS n FROM ehr."AuditRecord"')).rows[0].n);

  beforeAll(async () => {
    repository = await startTestPlatform();
    const token = await repository.token({ sub: 'caregraph-source', roles: ['clinician'], ttlSeconds: 3600 });
    t = await startTestPlatform({ XDS_REPOSITORY_URL: `${repository.url}/xds/repository`, XDS_REPOSITORY_TOKEN: token });
    admin = await t.token({ sub: 'auditor-test' });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await repository?.stop();
  });

  // One exercise per mutation of the ehr subgraph. A mutation added without an
  // exercise here fails the first test; one that writes no audit record fails the second.
  const state: Record<string, string> = {};
  /** The XDS test fixture's ITI-41 request (document inline) for p-1001, or its ITI-42 metadata alone (another repository's document). */
  const xdsSubmission = (withDocument: boolean) => {
    const id = `2.999.8.${Date.now()}.${Math.floor(Math.random() * 1e6)}`;
    const request = readFileSync(join(__dirname, 'fixtures', 'xds', 'iti41-provide-and-register.xml'), 'utf8')
      .replace(/\{\{PATIENT_ID\}\}/g, 'p-1001^^^&amp;2.999.1.1&amp;ISO')
      .replace('{{DOC_UNIQUE_ID}}', id)
      .replace('{{SET_UNIQUE_ID}}', `${id}.1`)
      .replace('{{DOCUMENT}}', Buffer.from('<note>audit</note>').toString('base64'));
    if (withDocument)
      return request.replace(/[\s\S]*(<xdsb:ProvideAndRegisterDocumentSetRequest[\s\S]*<\/xdsb:ProvideAndRegisterDocumentSetRequest>)[\s\S]*/, '$1');
    const slots = { hash: 'b'.repeat(40), size: '18', repositoryUniqueId: '1.2.3.4.5' };
    return request.replace(/[\s\S]*(<lcm:SubmitObjectsRequest[\s\S]*<\/lcm:SubmitObjectsRequest>)[\s\S]*/, '$1').replace(
      '<rim:Slot name="languageCode">',
      `${Object.entries(slots)
        .map(([name, value]) => `<rim:Slot name="${name}"><rim:ValueList><rim:Value>${value}</rim:Value></rim:ValueList></rim:Slot>`)
        .join('')}<rim:Slot name="languageCode">`,
    );
  };

  const EXERCISES: Record<string, () => Promise<unknown>> = {
    createPatient: async () => {
      const data = await gql(
        'mutation { createPatient(input: { id: "p-3001", givenNames: ["Fleur"], family: "Mulder", phone: "+31699990001", email: "secret.marker@example.org" }) { id ehrId } }',
      );
      state.ehr = data.createPatient.ehrId;
    },
    updatePatient: () => gql('mutation { updatePatient(id: "p-3001", input: { email: "other.marker@example.org" }, reason: "typo") { id } }'),
    updateEhrStatus: () => gql('mutation($e: ID!) { updateEhrStatus(ehrId: $e, isQueryable: true, isModifiable: true) { id } }', { e: state.ehr }),
    uploadTemplate: () =>
      gql('mutation($d: JSONObject!) { uploadTemplate(input: { id: "weight.v1", name: "Weight", area: OBSERVATION, definition: $d }) { id } }', {
        d: { type: 'object', children: { weight: { type: 'quantity', required: true, units: [{ unit: 'kg', min: 0, max: 500 }] } } },
      }),
    createComposition: async () => {
      const data = await gql(
        'mutation($e: ID!, $c: JSONObject!) { createComposition(input: { templateId: "clinical_note.v1", ehrId: $e, content: $c }) { uid } }',
        { e: state.ehr, c: NOTE('MARKER-headache-XYZZY') },
      );
      state.uid = data.createComposition.uid;
      // The vital signs the FHIR delete exercises below remove entry by entry.
      const vitals = await gql(
        'mutation($e: ID!, $c: JSONObject!) { createComposition(input: { templateId: "vital_signs.v1", ehrId: $e, content: $c }) { id } }',
        {
          e: state.ehr,
          c: {
            blood_pressure: { systolic: { magnitude: 120, unit: 'mm[Hg]' }, diastolic: { magnitude: 80, unit: 'mm[Hg]' } },
            pulse: { rate: { magnitude: 61, unit: '/min' } },
            recorded_at: '2026-11-20T08:00:00Z',
          },
        },
      );
      state.vitals = vitals.createComposition.id;
    },
    updateComposition: async () => {
      const data = await gql('mutation($id: ID!, $m: ID!, $c: JSONObject!) { updateComposition(id: $id, ifMatch: $m, content: $c) { uid } }', {
        id: state.uid.split('::')[0],
        m: state.uid,
        c: NOTE('MARKER-headache-XYZZY, resolved'),
      });
      state.uid = data.updateComposition.uid;
    },
    deleteComposition: () => gql('mutation($id: ID!) { deleteComposition(id: $id, reason: "duplicate") { uid } }', { id: state.uid }),
    grantConsent: () => gql('mutation { grantConsent(patientId: "p-3001", purpose: RESEARCH) { granted } }'),
    revokeConsent: () => gql('mutation { revokeConsent(patientId: "p-3001", purpose: RESEARCH) { granted } }'),
    setAccessPolicy: () => gql('mutation { setAccessPolicy(role: NURSE, area: ORDER, canRead: true, canWrite: true) { role } }'),
    updateAppointmentStatus: () => gql('mutation { updateAppointmentStatus(id: "appt-1001", status: "confirmed", reason: "patient replied C") { status } }'),
    // Standards exchange (FHIR, openEHR REST): the same services, so the same audit trail.
    fhirCreate: async () => {
      const data = await gql('mutation($r: JSONObject!) { fhirCreate(resource: $r) }', {
        r: { resourceType: 'Patient', name: [{ family: 'Bos', given: ['Ivo'] }] },
      });
      state.fhirPatient = data.fhirCreate.id;
    },
    fhirUpdate: () =>
      gql('mutation($id: ID!, $r: JSONObject!) { fhirUpdate(resourceType: "Patient", id: $id, resource: $r, ifMatch: "1") }', {
        id: state.fhirPatient,
        r: { resourceType: 'Patient', id: state.fhirPatient, name: [{ family: 'Bos', given: ['Ivo', 'J.'] }] },
      }),
    openehrUpdateEhrStatus: async () => {
      const current = await gql('query($e: ID!) { openehrEhrStatus(ehrId: $e) { uid } }', { e: state.ehr });
      await gql('mutation($e: ID!, $m: String!, $s: JSON) { openehrUpdateEhrStatus(ehrId: $e, ifMatch: $m, ehrStatus: $s) { uid } }', {
        e: state.ehr,
        m: current.openehrEhrStatus.uid,
        s: { _type: 'EHR_STATUS', is_queryable: true, is_modifiable: true },
      });
    },
    openehrCreateComposition: async () => {
      const data = await gql(
        'mutation($e: ID!, $c: JSONObject!) { openehrCreateComposition(ehrId: $e, templateId: "clinical_note.v1", composition: $c) { uid } }',
        { e: state.ehr, c: NOTE('MARKER-headache-XYZZY') },
      );
      state.openehrUid = data.openehrCreateComposition.uid;
    },
    openehrUpdateComposition: async () => {
      const data = await gql(
        'mutation($e: ID!, $id: ID!, $m: String!, $c: JSONObject!) { openehrUpdateComposition(ehrId: $e, versionedObjectUid: $id, ifMatch: $m, composition: $c) { uid } }',
        {
          e: state.ehr,
          id: state.openehrUid.split('::')[0],
          m: state.openehrUid,
          c: NOTE('MARKER-headache-XYZZY, better'),
        },
      );
      state.openehrUid = data.openehrUpdateComposition.uid;
    },
    // Tag values are free text: the marker must stay out of the raw rows too.
    openehrSetItemTags: () =>
      gql('mutation($e: ID!, $u: String!, $t: JSON!) { openehrSetItemTags(ehrId: $e, targetType: "COMPOSITION", uid: $u, tags: $t) { body } }', {
        e: state.ehr,
        u: state.openehrUid.split('::')[0],
        t: [
          { key: 'flag', value: 'MARKER-headache follow-up' },
          { key: 'review', value: 'MARKER-headache' },
        ],
      }),
    openehrDeleteItemTags: () =>
      gql('mutation($e: ID!, $u: String!) { openehrDeleteItemTags(ehrId: $e, targetType: "COMPOSITION", uid: $u, key: "review") { uid } }', {
        e: state.ehr,
        u: state.openehrUid.split('::')[0],
      }),
    openehrDeleteComposition: () =>
      gql('mutation($e: ID!, $u: ID!) { openehrDeleteComposition(ehrId: $e, precedingVersionUid: $u) { uid } }', { e: state.ehr, u: state.openehrUid }),
    openehrCreateEhr: () => gql('mutation { openehrCreateEhr { uid } }'),
    openehrCommitContribution: () =>
      gql('mutation($e: ID!, $c: JSON!) { openehrCommitContribution(ehrId: $e, contribution: $c) { uid } }', {
        e: state.ehr,
        c: {
          versions: [
            {
              _type: 'ORIGINAL_VERSION',
              commit_audit: { change_type: { value: 'creation', defining_code: { terminology_id: { value: 'openehr' }, code_string: '249' } } },
              lifecycle_state: { value: 'complete', defining_code: { terminology_id: { value: 'openehr' }, code_string: '532' } },
              data: {
                _type: 'COMPOSITION',
                archetype_details: { template_id: { value: 'clinical_note.v1' } },
                content: NOTE('MARKER-headache-XYZZY, committed'),
              },
            },
          ],
          audit: { _type: 'AUDIT_DETAILS', committer: { _type: 'PARTY_IDENTIFIED', name: 'Dr Audit' } },
        },
      }),
    // Folder names can be clinical: the marker must stay out of the raw rows (encrypted like composition content).
    openehrCreateDirectory: async () => {
      const data = await gql('mutation($e: ID!, $f: JSONObject!) { openehrCreateDirectory(ehrId: $e, folder: $f) { uid } }', {
        e: state.ehr,
        f: { _type: 'FOLDER', archetype_node_id: 'openEHR-EHR-FOLDER.generic.v1', name: { value: 'MARKER-headache folder' } },
      });
      state.directoryUid = data.openehrCreateDirectory.uid;
    },
    openehrUpdateDirectory: async () => {
      const data = await gql('mutation($e: ID!, $m: String!, $f: JSONObject!) { openehrUpdateDirectory(ehrId: $e, ifMatch: $m, folder: $f) { uid } }', {
        e: state.ehr,
        m: state.directoryUid,
        f: { _type: 'FOLDER', archetype_node_id: 'openEHR-EHR-FOLDER.generic.v1', name: { value: 'MARKER-headache folders' } },
      });
      state.directoryUid = data.openehrUpdateDirectory.uid;
    },
    openehrDeleteDirectory: () =>
      gql('mutation($e: ID!, $m: String!) { openehrDeleteDirectory(ehrId: $e, ifMatch: $m, reason: "filed elsewhere") { uid } }', {
        e: state.ehr,
        m: state.directoryUid,
      }),
    bookAppointment: async () => {
      const data = await gql(
        'mutation { bookAppointment(input: { patientId: "p-3001", start: "2031-03-03T09:00:00Z", end: "2031-03-03T09:30:00Z", location: "Room 9" }) { id } }',
      );
      state.appointment = data.bookAppointment.id;
    },
    rescheduleAppointment: () =>
      gql('mutation($id: ID!) { rescheduleAppointment(id: $id, input: { start: "2031-03-04T09:00:00Z", end: "2031-03-04T09:30:00Z" }) { id } }', {
        id: state.appointment,
      }),
    cancelAppointment: () => gql('mutation($id: ID!) { cancelAppointment(id: $id, reason: "patient asked") { id } }', { id: state.appointment }),
    openehrUploadTemplate: () =>
      gql('mutation($t: JSON) { openehrUploadTemplate(template: $t) { uid } }', {
        t: {
          template_id: 'height.v1',
          name: 'Height',
          area: 'observation',
          definition: { type: 'object', children: { height: { type: 'quantity', required: true, units: [{ unit: 'cm' }] } } },
        },
      }),
    openehrStoreQuery: () =>
      gql('mutation($q: String!) { openehrStoreQuery(name: "org.example::notes", version: "1.0.0", q: $q) { uid } }', {
        q: 'SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c',
      }),
    fhirConditionalCreate: () =>
      gql('mutation($r: JSONObject!) { fhirConditionalCreate(ifNoneExist: "name:exact=Hazelaar", resource: $r) }', {
        r: { resourceType: 'Patient', name: [{ family: 'Hazelaar', given: ['Mees'] }] },
      }),
    fhirPatch: () =>
      gql('mutation($id: ID!, $p: JSON!) { fhirPatch(resourceType: "Patient", id: $id, patch: $p) }', {
        id: state.fhirPatient,
        p: [{ op: 'add', path: '/gender', value: 'other' }],
      }),
    fhirDelete: () =>
      gql('mutation($id: ID!) { fhirDelete(resourceType: "Observation", id: $id, reason: "entered in error") }', { id: `${state.vitals}.pulse` }),
    fhirConditionalDelete: () =>
      gql('mutation($q: String!) { fhirConditionalDelete(resourceType: "Observation", query: $q, reason: "entered in error") }', {
        q: 'patient=p-3001&code=http://loinc.org|85354-9',
      }),
    fhirConditionalUpdate: () =>
      gql('mutation($q: String!, $r: JSONObject!) { fhirConditionalUpdate(resourceType: "Patient", query: $q, resource: $r) }', {
        q: `_id=${state.fhirPatient}`,
        r: { resourceType: 'Patient', id: state.fhirPatient, name: [{ family: 'Bos', given: ['Ivo', 'Jan'] }] },
      }),
    xdsProvideAndRegister: async () => {
      const data = await gql('mutation($x: String!) { xdsProvideAndRegister(request: $x) }', { x: xdsSubmission(true) });
      expect(data.xdsProvideAndRegister).toContain('ResponseStatusType:Success');
    },
    xdsRegister: async () => {
      const data = await gql('mutation($x: String!) { xdsRegister(request: $x) }', { x: xdsSubmission(false) });
      expect(data.xdsRegister).toContain('ResponseStatusType:Success');
    },
    mhdProvideDocumentBundle: async () => {
      const bundle = provideBundle({ docUniqueId: uid(), document: Buffer.from('audit marker note') });
      const data = await gql('mutation($b: JSONObject!) { mhdProvideDocumentBundle(bundle: $b) }', { b: bundle });
      expect(data.mhdProvideDocumentBundle).toMatchObject({ resourceType: 'Bundle', type: 'transaction-response' });
    },
    publishPatientCcd: async () => {
      const data = await gql('mutation { publishPatientCcd(patientId: "p-1001") { documentUniqueId } }');
      expect(data.publishPatientCcd.documentUniqueId).toMatch(/^2\.25\./);
    },
    // The privacy officer's review of the access log (docs/admin.md "Privacy"): an entry of the reads above.
    markAccessLogReviewed: async () => {
      const data = await gql('{ accessLogReview(reviewed: false, limit: 1) { data { id } } }');
      return gql('mutation($ids: [ID!]!) { markAccessLogReviewed(entryIds: $ids, note: "checked") { entryId } }', { ids: [data.accessLogReview.data[0].id] });
    },
    // Data subject rights (docs/privacy.md), last: the restriction ends the processing of p-1002.
    setRecordRetention: () => gql('mutation { setRecordRetention(category: "access_log", days: 2000) { days } }'),
    setLegalHold: () => gql('mutation { setLegalHold(patientId: "p-1002", hold: true, reason: "court order") { legalHold } }'),
    restrictPatientRecord: () => gql('mutation { restrictPatientRecord(patientId: "p-1002", reason: "erasure request") { restrictedAt } }'),
  };

  it('[AUD-001] has an audit exercise for every mutation of the ehr subgraph', async () => {
    const { schema } = await buildEhrSchema();
    const mutations = Object.keys(schema.getMutationType()!.getFields());
    expect(mutations.filter((m) => !(m in EXERCISES))).toEqual([]);
    expect(Object.keys(EXERCISES).filter((m) => !mutations.includes(m))).toEqual([]);
  });

  it('[AUD-001] writes at least one audit record for every mutation', async () => {
    for (const [mutation, exercise] of Object.entries(EXERCISES)) {
      const before = await auditCount();
      await exercise();
      const written = (
        await db().query<{ actor: string }>('SELECT actor FROM ehr."AuditRecord" ORDER BY "at" DESC LIMIT $1', [Math.max(1, (await auditCount()) - before)])
      ).rows;
      expect({ mutation, audited: (await auditCount()) > before }).toEqual({ mutation, audited: true });
      expect(written.every((r) => r.actor === 'auditor-test')).toBe(true);
    }
  });

  it('[SEC-009] keeps contact details and composition content out of the raw rows (ciphertext only)', async () => {
    const markers = ['+31699990001', 'secret.marker@example.org', 'other.marker@example.org', 'MARKER-headache', '+31612345671', 'anna.devries@example.org'];
    const tables = (
      await db().query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'ehr' AND table_type = 'BASE TABLE'")
    ).rows.map((r) => r.table_name);
    expect(tables).toEqual(expect.arrayContaining(['Patient', 'CompositionVersion', 'AuditRecord']));
    for (const table of tables) {
      const rows = (await db().query<{ row: string }>(`SELECT t::text AS row FROM ehr."${table}" t`)).rows.map((r) => r.row).join('\n');
      for (const marker of markers) expect({ table, leaks: rows.includes(marker) ? marker : null }).toEqual({ table, leaks: null });
    }
    const versions = (await db().query<{ contentEnc: string | null }>('SELECT "contentEnc" FROM ehr."CompositionVersion" WHERE "contentEnc" IS NOT NULL')).rows;
    expect(versions.length).toBeGreaterThan(0);
    for (const v of versions) expect(v.contentEnc).toMatch(/^v1\.[\w-]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    // …while the API still reads them back.
    const read = await gql('{ patient(id: "p-3001") { contact { phone email } } }');
    expect(read.patient.contact).toEqual({ phone: '+31699990001', email: 'other.marker@example.org' });
  });

  it('[AUD-002] refuses UPDATE, DELETE and TRUNCATE of audit and access-log rows at the database', async () => {
    for (const table of ['AuditRecord', 'AccessLog']) {
      await expect(db().query(`UPDATE ehr."${table}" SET "actor" = 'mallory'`)).rejects.toThrow(/append-only/);
      await expect(db().query(`DELETE FROM ehr."${table}"`)).rejects.toThrow(/append-only/);
      await expect(db().query(`TRUNCATE ehr."${table}"`)).rejects.toThrow(/append-only/);
    }
    expect(await auditCount()).toBeGreaterThan(0);
    const privileges = await db().query<{ n: string }>(
      "SELECT count(*) AS n FROM information_schema.role_table_grants WHERE table_schema = 'ehr' AND table_name = 'AuditRecord' AND grantee = 'PUBLIC' AND privilege_type IN ('UPDATE', 'DELETE')",
    );
    expect(Number(privileges.rows[0].n)).toBe(0);
  });

  it('[AUD-003] keeps the hash chain intact under concurrent writers', async () => {
    await Promise.all(
      Array.from({ length: 8 }, () =>
        gql('mutation($c: JSONObject!) { createComposition(input: { templateId: "vital_signs.v1", ehrId: "ehr-p-1001", content: $c }) { uid } }', {
          c: VITALS,
        }),
      ),
    );
    const result = await gql('{ verifyAuditChain { valid checked brokenAtSeq } }');
    expect(result.verifyAuditChain).toMatchObject({ valid: true, brokenAtSeq: null });
    expect(result.verifyAuditChain.checked).toBeGreaterThan(20);
  });

  it('row-level security shows a non-owner role only the rows of app.tenant_id', async () => {
    const role = 'caregraph_rls_probe';
    await db().exec(`
      DO $$ BEGIN CREATE ROLE ${role} NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
      GRANT USAGE ON SCHEMA ehr TO ${role};
      GRANT SELECT, INSERT ON ehr."Patient" TO ${role};`);
    const probe = async (tenant: string | null) =>
      inRolledBackTransaction(async (query) => {
        await query(`SET LOCAL ROLE ${role}`);
        if (tenant) await query(`SELECT set_config('app.tenant_id', $1, true)`, [tenant]);
        const ids = (await query('SELECT id FROM ehr."Patient" ORDER BY id')).map((r) => r.id);
        let crossWrite = 'allowed';
        try {
          await query(
            `INSERT INTO ehr."Patient" ("tenantId", id, "ehrId", "givenNames", family, "updatedAt") VALUES ('demo', 'p-rls', 'ehr-p-rls', '{}', 'X', now())`,
          );
        } catch (err) {
          crossWrite = /row-level security/.test((err as Error).message) ? 'refused' : (err as Error).message;
        }
        return { ids, crossWrite };
      });
    expect(await probe('acme')).toEqual({ ids: ['p-2001'], crossWrite: 'refused' });
    expect(await probe(null)).toEqual({ ids: [], crossWrite: 'refused' });
    expect((await probe('demo')).ids).toEqual(expect.arrayContaining(['p-1001', 'p-1002', 'p-1003']));
  });

  // Last: it breaks the demo tenant's chain on purpose.
  it('[AUD-003] detects an edited audit row through the hash chain', async () => {
    await db().exec('ALTER TABLE ehr."AuditRecord" DISABLE TRIGGER "AuditRecord_append_only"');
    try {
      await db().query(`UPDATE ehr."AuditRecord" SET "reason" = 'nothing to see' WHERE "tenantId" = 'demo' AND seq = 3`);
    } finally {
      await db().exec('ALTER TABLE ehr."AuditRecord" ENABLE TRIGGER "AuditRecord_append_only"');
    }
    const broken = await gql('{ verifyAuditChain { valid checked brokenAtSeq brokenRecordId problem } }');
    expect(broken.verifyAuditChain).toMatchObject({
      valid: false,
      checked: 2,
      brokenAtSeq: 3,
      brokenRecordId: expect.any(String),
      problem: expect.stringMatching(/altered/),
    });
    const acme = await gql('{ verifyAuditChain { valid } }', undefined, await t.token({ tenants: ['acme'] }));
    expect(acme.verifyAuditChain.valid).toBe(true);
    const nurse = await t.graphql('{ verifyAuditChain { valid } }', undefined, { token: await t.token({ roles: ['nurse'] }) });
    expect(nurse.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  /**
   * One transaction, rolled back (RLS needs SET LOCAL ROLE and set_config in it). On PGlite it holds the
   * embedded database's transaction lock: the platform's own jobs share that one session and must not
   * run statements inside it.
   */
  async function inRolledBackTransaction<T>(fn: (query: (sql: string, values?: unknown[]) => Promise<any[]>) => Promise<T>): Promise<T> {
    const database = db();
    if (database.pglite) {
      return database.pglite.transaction(async (tx) => {
        const result = await fn(async (sql, values) => (await tx.query<any>(sql, values)).rows);
        await tx.rollback();
        return result;
      });
    }
    // As the owner, like every maintenance query of the tests: the service's runtime role may not switch to the probe role.
    const client = new pg.Client({ connectionString: database.ownerConnectionString ?? database.connectionString });
    await client.connect();
    try {
      await client.query('BEGIN');
      return await fn(async (sql, values) => (await client.query(sql, values as any[])).rows);
    } finally {
      await client.query('ROLLBACK').catch(() => {});
      await client.end();
    }
  }
});

/**
 * The attacker of these tests has write access to the database (the owner or
 * a superuser: the test's own connection) but not the service's secrets nor
 * the checkpoint file outside the database. The hash chain alone cannot stop
 * them: they can recompute every hash. A keyed chain and signed checkpoints must.
 */
describe(`audit chain against an attacker with database write access (${backendName})`, () => {
  let t: TestPlatform;
  let admin: string;
  const gql = async (query: string, variables?: Record<string, unknown>, token = admin) => {
    const res = await t.graphql(query, variables, { token });
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  };
  const verify = async (tenant: string) =>
    (await gql('{ verifyAuditChain { valid checked brokenAtSeq problem } }', undefined, await t.token({ tenants: [tenant] }))).verifyAuditChain;

  beforeAll(async () => {
    t = await startTestPlatform({ AUDIT_CHECKPOINT_INTERVAL: '200ms' });
    admin = await t.token({ sub: 'chain-test' });
  });
  afterAll(() => t?.stop());

  /** Runs SQL as the attacker: one transaction with triggers off (session_replication_role), as a superuser may. */
  async function asAttacker(statements: string[]): Promise<void> {
    const script = ['BEGIN', 'SET LOCAL session_replication_role = replica', ...statements, 'COMMIT'].join(';\n');
    const database = t.platform.db!;
    if (database.pglite) return database.exec(script);
    const client = new pg.Client({ connectionString: t.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(script);
    } finally {
      await client.end();
    }
  }

  const literal = (value: string | null) => (value === null ? 'NULL' : `'${value.replace(/'/g, "''")}'`);

  /** A stored record as the attacker reads it: what its hash covers, and the hash. */
  type StoredRecord = Omit<ChainedFields, 'hashVersion'> & { hash: string };
  const chainOf = async (tenant: string): Promise<StoredRecord[]> =>
    (
      await t.platform.db!.query<Omit<StoredRecord, 'at'> & { at: string }>(
        `SELECT "tenantId", seq, id, actor, action, "entityType", "entityId", to_char(at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at,
                before, after, reason, "prevHash", hash FROM ehr."AuditRecord" WHERE "tenantId" = $1 ORDER BY seq`,
        [tenant],
      )
    ).rows.map((r) => ({
      ...r,
      at: new Date(r.at),
      before: typeof r.before === 'string' ? JSON.parse(r.before) : r.before,
      after: typeof r.after === 'string' ? JSON.parse(r.after) : r.after,
    }));

  /** The chain's published algorithm, which the attacker has read: SHA-256 of what the hash covers, no key. */
  const plainHash = (r: StoredRecord) => createHash('sha256').update(chainedJson(r)).digest('hex');

  const checkpointedSeq = (tenant: string) => {
    const file = join(t.env.DATA_DIR, 'audit-checkpoints.jsonl');
    if (!existsSync(file)) return 0;
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    return Math.max(0, ...lines.filter((c) => c.tenantId === tenant && !c.log).map((c) => c.seq));
  };

  it('[AUD-003] verifies an untouched chain', async () => {
    await gql('mutation { updatePatient(id: "p-1001", input: { email: "anna.new@example.org" }, reason: "moved") { id } }');
    await gql('mutation { updateAppointmentStatus(id: "appt-1001", status: "confirmed") { status } }');
    expect(await verify('demo')).toMatchObject({ valid: true, brokenAtSeq: null, problem: null });
  });

  it('[AUD-003] detects a rewritten record even when every following hash is recomputed', async () => {
    const chain = await chainOf('demo');
    expect(chain.length).toBeGreaterThan(3);
    // Rewrite record 2's `after`, then re-link and re-hash it and every record after it.
    const hasVersion =
      (
        await t.platform.db!.query(
          `SELECT 1 FROM information_schema.columns WHERE table_schema = 'ehr' AND table_name = 'AuditRecord' AND column_name = 'hashVersion'`,
        )
      ).rows.length > 0;
    const statements: string[] = [];
    let prev = chain[0].hash;
    for (const record of chain.slice(1)) {
      if (record.seq === 2) record.after = { ...(record.after as object), forged: true };
      record.prevHash = prev;
      record.hash = plainHash(record);
      prev = record.hash;
      statements.push(
        `UPDATE ehr."AuditRecord" SET after = ${literal(JSON.stringify(record.after))}::jsonb, "prevHash" = ${literal(record.prevHash)}, hash = ${literal(record.hash)}` +
          `${hasVersion ? ', "hashVersion" = 1' : ''} WHERE "tenantId" = 'demo' AND seq = ${record.seq}`,
      );
    }
    await asAttacker(statements);
    const result = await verify('demo');
    expect(result).toMatchObject({ valid: false, brokenAtSeq: 2 });
  });

  it('[AUD-004] detects a deleted tail against the last signed checkpoint', async () => {
    const acme = await t.token({ tenants: ['acme'] });
    for (const purpose of ['RESEARCH', 'MESSAGING'])
      await gql(`mutation { grantConsent(patientId: "p-2001", purpose: ${purpose}) { granted } }`, undefined, acme);
    const head = (await chainOf('acme')).at(-1)!.seq;
    await eventually(async () => (checkpointedSeq('acme') >= head ? true : undefined), 'a signed checkpoint of the acme chain head', 10_000);
    await asAttacker([`DELETE FROM ehr."AuditRecord" WHERE "tenantId" = 'acme' AND seq > ${head - 2}`]);
    const result = await verify('acme');
    expect(result).toMatchObject({ valid: false, problem: expect.stringMatching(/checkpoint/) });
  });
});
