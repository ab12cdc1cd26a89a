import { startTestPlatform, backendName, type TestPlatform } from './harness';
import pg from 'pg';
import { buildEhrSchema } from '../subgraphs/ehr';
import { NOTE, VITALS } from './ehr-fixtures';

/**
 * The clinical record's guarantees at the database: audit immutability, the
 * hash chain, "every mutation is audited", no plaintext at rest, and
 * row-level security as the second tenant wall.
 */
describe(`clinical record audit, encryption and isolation at the database (${backendName})`, () => {
  let t: TestPlatform;
  let admin: string;
  const db = () => t.platform.db!;
  const gql = async (query: string, variables?: Record<string, unknown>, token = admin) => {
    const res = await t.graphql(query, variables, { token });
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  };
  const auditCount = async () => Number((await db().query<{ n: string }>('SELECT count(*) AS n FROM ehr."AuditRecord"')).rows[0].n);

  beforeAll(async () => {
    t = await startTestPlatform();
    admin = await t.token({ sub: 'auditor-test' });
  });
  afterAll(() => t?.stop());

  // One exercise per mutation of the ehr subgraph. A mutation added without an
  // exercise here fails the first test; one that writes no audit record fails the second.
  const state: Record<string, string> = {};
  const EXERCISES: Record<string, () => Promise<unknown>> = {
    createPatient: () => gql('mutation { createPatient(input: { id: "p-3001", givenNames: ["Fleur"], family: "Mulder", phone: "+31699990001", email: "secret.marker@example.org" }) { id } }'),
    updatePatient: () => gql('mutation { updatePatient(id: "p-3001", input: { email: "other.marker@example.org" }, reason: "typo") { id } }'),
    updateEhrStatus: () => gql('mutation { updateEhrStatus(ehrId: "ehr-p-3001", isQueryable: true, isModifiable: true) { id } }'),
    uploadTemplate: () =>
      gql('mutation($d: JSONObject!) { uploadTemplate(input: { id: "weight.v1", name: "Weight", area: OBSERVATION, definition: $d }) { id } }', {
        d: { type: 'object', children: { weight: { type: 'quantity', required: true, units: [{ unit: 'kg', min: 0, max: 500 }] } } },
      }),
    createComposition: async () => {
      const data = await gql('mutation($c: JSONObject!) { createComposition(input: { templateId: "clinical_note.v1", ehrId: "ehr-p-3001", content: $c }) { uid } }', { c: NOTE('MARKER-headache-XYZZY') });
      state.uid = data.createComposition.uid;
    },
    updateComposition: async () => {
      const data = await gql('mutation($id: ID!, $m: ID!, $c: JSONObject!) { updateComposition(id: $id, ifMatch: $m, content: $c) { uid } }', {
        id: state.uid.split('::')[0], m: state.uid, c: NOTE('MARKER-headache-XYZZY, resolved'),
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
      const data = await gql('mutation($r: JSONObject!) { fhirCreate(resource: $r) }', { r: { resourceType: 'Patient', name: [{ family: 'Bos', given: ['Ivo'] }] } });
      state.fhirPatient = data.fhirCreate.id;
    },
    fhirUpdate: () =>
      gql('mutation($id: ID!, $r: JSONObject!) { fhirUpdate(resourceType: "Patient", id: $id, resource: $r, ifMatch: "1") }', {
        id: state.fhirPatient,
        r: { resourceType: 'Patient', id: state.fhirPatient, name: [{ family: 'Bos', given: ['Ivo', 'J.'] }] },
      }),
    openehrUpdateEhrStatus: () =>
      gql('mutation($s: JSON) { openehrUpdateEhrStatus(ehrId: "ehr-p-3001", ifMatch: "ehr-p-3001-status::caregraph.local::2", ehrStatus: $s) { uid } }', {
        s: { _type: 'EHR_STATUS', is_queryable: true, is_modifiable: true },
      }),
    openehrCreateComposition: async () => {
      const data = await gql('mutation($c: JSONObject!) { openehrCreateComposition(ehrId: "ehr-p-3001", templateId: "clinical_note.v1", composition: $c) { uid } }', { c: NOTE('MARKER-headache-XYZZY') });
      state.openehrUid = data.openehrCreateComposition.uid;
    },
    openehrUpdateComposition: async () => {
      const data = await gql('mutation($id: ID!, $m: String!, $c: JSONObject!) { openehrUpdateComposition(ehrId: "ehr-p-3001", versionedObjectUid: $id, ifMatch: $m, composition: $c) { uid } }', {
        id: state.openehrUid.split('::')[0], m: state.openehrUid, c: NOTE('MARKER-headache-XYZZY, better'),
      });
      state.openehrUid = data.openehrUpdateComposition.uid;
    },
    openehrDeleteComposition: () => gql('mutation($u: ID!) { openehrDeleteComposition(ehrId: "ehr-p-3001", precedingVersionUid: $u) { uid } }', { u: state.openehrUid }),
    openehrUploadTemplate: () =>
      gql('mutation($t: JSON) { openehrUploadTemplate(template: $t) { uid } }', {
        t: { template_id: 'height.v1', name: 'Height', area: 'observation', definition: { type: 'object', children: { height: { type: 'quantity', required: true, units: [{ unit: 'cm' }] } } } },
      }),
  };

  it('has an audit exercise for every mutation of the ehr subgraph', async () => {
    const { schema } = await buildEhrSchema();
    const mutations = Object.keys(schema.getMutationType()!.getFields());
    expect(mutations.filter((m) => !(m in EXERCISES))).toEqual([]);
    expect(Object.keys(EXERCISES).filter((m) => !mutations.includes(m))).toEqual([]);
  });

  it('writes at least one audit record for every mutation', async () => {
    for (const [mutation, exercise] of Object.entries(EXERCISES)) {
      const before = await auditCount();
      await exercise();
      const written = (await db().query<{ actor: string }>('SELECT actor FROM ehr."AuditRecord" ORDER BY "at" DESC LIMIT $1', [Math.max(1, (await auditCount()) - before)])).rows;
      expect({ mutation, audited: (await auditCount()) > before }).toEqual({ mutation, audited: true });
      expect(written.every((r) => r.actor === 'auditor-test')).toBe(true);
    }
  });

  it('keeps contact details and composition content out of the raw rows (ciphertext only)', async () => {
    const markers = ['+31699990001', 'secret.marker@example.org', 'other.marker@example.org', 'MARKER-headache', '+31612345671', 'anna.devries@example.org'];
    const tables = (await db().query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'ehr' AND table_type = 'BASE TABLE'")).rows.map((r) => r.table_name);
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

  it('refuses UPDATE, DELETE and TRUNCATE of audit and access-log rows at the database', async () => {
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

  it('keeps the hash chain intact under concurrent writers', async () => {
    await Promise.all(
      Array.from({ length: 8 }, () => gql('mutation($c: JSONObject!) { createComposition(input: { templateId: "vital_signs.v1", ehrId: "ehr-p-1001", content: $c }) { uid } }', { c: VITALS })),
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
      withSession(async (query) => {
        await query('BEGIN');
        await query(`SET LOCAL ROLE ${role}`);
        if (tenant) await query(`SELECT set_config('app.tenant_id', $1, true)`, [tenant]);
        const ids = (await query('SELECT id FROM ehr."Patient" ORDER BY id')).map((r) => r.id);
        let crossWrite = 'allowed';
        try {
          await query(`INSERT INTO ehr."Patient" ("tenantId", id, "ehrId", "givenNames", family, "updatedAt") VALUES ('demo', 'p-rls', 'ehr-p-rls', '{}', 'X', now())`);
        } catch (err) {
          crossWrite = /row-level security/.test((err as Error).message) ? 'refused' : (err as Error).message;
        }
        await query('ROLLBACK');
        return { ids, crossWrite };
      });
    expect(await probe('acme')).toEqual({ ids: ['p-2001'], crossWrite: 'refused' });
    expect(await probe(null)).toEqual({ ids: [], crossWrite: 'refused' });
    expect((await probe('demo')).ids).toEqual(expect.arrayContaining(['p-1001', 'p-1002', 'p-1003']));
  });

  // Last: it breaks the demo tenant's chain on purpose.
  it('detects an edited audit row through the hash chain', async () => {
    await db().exec('ALTER TABLE ehr."AuditRecord" DISABLE TRIGGER "AuditRecord_append_only"');
    try {
      await db().query(`UPDATE ehr."AuditRecord" SET "reason" = 'nothing to see' WHERE "tenantId" = 'demo' AND seq = 3`);
    } finally {
      await db().exec('ALTER TABLE ehr."AuditRecord" ENABLE TRIGGER "AuditRecord_append_only"');
    }
    const broken = await gql('{ verifyAuditChain { valid checked brokenAtSeq brokenRecordId problem } }');
    expect(broken.verifyAuditChain).toMatchObject({ valid: false, checked: 2, brokenAtSeq: 3, brokenRecordId: expect.any(String), problem: expect.stringMatching(/altered/) });
    const acme = await gql('{ verifyAuditChain { valid } }', undefined, await t.token({ tenants: ['acme'] }));
    expect(acme.verifyAuditChain.valid).toBe(true);
    const nurse = await t.graphql('{ verifyAuditChain { valid } }', undefined, { token: await t.token({ roles: ['nurse'] }) });
    expect(nurse.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  /** One database session (RLS needs SET LOCAL ROLE and set_config on the same connection). */
  async function withSession<T>(fn: (query: (sql: string, values?: unknown[]) => Promise<any[]>) => Promise<T>): Promise<T> {
    const database = db();
    if (database.pglite) {
      return fn(async (sql, values) => (await database.pglite!.query<any>(sql, values as any[])).rows);
    }
    const client = new pg.Client({ connectionString: database.connectionString });
    await client.connect();
    try {
      return await fn(async (sql, values) => (await client.query(sql, values as any[])).rows);
    } finally {
      await client.end();
    }
  }
});
