import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { randomBytes } from 'node:crypto';
import { FieldCipher } from '../common/crypto';
import { loadConfig } from '../common/config';
import { createEhrPrisma } from '../subgraphs/ehr/db/client';
import { rotateEncryptionKeys } from '../subgraphs/ehr/keys/rotate';
import { chainKey } from '../subgraphs/ehr/audit/chain';
import { VITALS } from './ehr-fixtures';
import { provideBundle, uid } from './support/mhd-bundle';

describe(`encryption key rotation (${backendName})`, () => {
  const newKey = randomBytes(32);
  let oldKey: Buffer;
  let t: TestPlatform;

  beforeAll(async () => {
    // The run's seeded database, encrypted with its key: the key being rotated away.
    t = await startTestPlatform();
    oldKey = Buffer.from(t.env.ENCRYPTION_KEY, 'base64');
  });
  afterAll(() => t?.stop());

  /** Every encrypted column of the clinical record (docs/security.md, "Encryption at rest"). */
  const ENCRYPTED_COLUMNS = [
    ['Patient', 'phoneEnc'],
    ['Patient', 'emailEnc'],
    ['CompositionVersion', 'contentEnc'],
    ['DirectoryVersion', 'contentEnc'],
    ['EhrStatusVersion', 'contentEnc'],
    ['ItemTag', 'valueEnc'],
    ['XdsDocument', 'metadataEnc'],
    ['XdsDocument', 'contentEnc'],
    ['XdsSubmissionSet', 'metadataEnc'],
  ];
  const encryptedColumns = async () => {
    const db = t.platform.db!;
    const columns: Record<string, string[]> = {};
    for (const [table, column] of ENCRYPTED_COLUMNS)
      columns[`${table}.${column}`] = (await db.query<{ v: string | null }>(`SELECT "${column}" AS v FROM ehr."${table}" ORDER BY 1`)).rows.flatMap((r) =>
        r.v ? [r.v] : [],
      );
    return columns;
  };
  const encryptedValues = async () => Object.values(await encryptedColumns()).flat();

  it('validates PREVIOUS_ENCRYPTION_KEYS', () => {
    expect(loadConfig({ PREVIOUS_ENCRYPTION_KEYS: `${oldKey.toString('base64')}, ${newKey.toString('base64')}` }).PREVIOUS_ENCRYPTION_KEYS).toEqual([
      oldKey,
      newKey,
    ]);
    expect(loadConfig({}).PREVIOUS_ENCRYPTION_KEYS).toEqual([]);
    expect(() => loadConfig({ PREVIOUS_ENCRYPTION_KEYS: 'c2hvcnQ=' })).toThrow(/PREVIOUS_ENCRYPTION_KEYS: key 1 must be base64 of exactly 32 bytes/);
  });

  it('[SEC-009] re-encrypts contact details, compositions, EHR_STATUS versions, directories, item tags and XDS documents with the new key, audited and re-runnable', async () => {
    const created = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS } });
    expect(created.status).toBe(201);
    const folder = { _type: 'FOLDER', archetype_node_id: 'openEHR-EHR-FOLDER.generic.v1', name: { value: 'Oncology episode' } };
    const json = { 'content-type': 'application/json' };
    expect((await t.request('POST', '/openehr/v1/ehr/ehr-p-1001/directory', { body: folder, headers: json })).status).toBe(201);
    const tags = [{ key: 'flag', value: 'follow-up' }];
    expect((await t.request('PUT', `/openehr/v1/ehr/ehr-p-1001/composition/${created.body.id}/tags`, { body: tags, headers: json })).status).toBe(204);
    const ehrStatus = (await t.request('GET', '/openehr/v1/ehr/ehr-p-1001/ehr_status')).body;
    const details = { _type: 'ITEM_LIST', archetype_node_id: 'at0001', name: { value: 'details' }, items: [] };
    const statusPut = await t.request('PUT', '/openehr/v1/ehr/ehr-p-1001/ehr_status', {
      body: { ...ehrStatus, other_details: details },
      headers: { ...json, 'if-match': ehrStatus.uid.value },
    });
    expect(statusPut.status).toBe(204);
    const bundle = provideBundle({ docUniqueId: uid(), document: Buffer.from('a referral letter') });
    expect((await t.request('POST', '/fhir/R4', { body: bundle, headers: { 'content-type': 'application/fhir+json' } })).status).toBe(200);
    // Every encrypted column holds a value written with the old key.
    for (const [column, values] of Object.entries(await encryptedColumns())) expect({ column, empty: values.length === 0 }).toEqual({ column, empty: false });
    const before = await encryptedValues();
    expect(before.every((v) => v.split('.')[1] === FieldCipher.fingerprint(oldKey))).toBe(true);

    const prisma = createEhrPrisma(t.platform.db!);
    const key = chainKey(t.platform.runtime.secrets.auditKey);
    try {
      // Without the old key nothing can be read: the command must say so, not destroy data.
      const blind = await rotateEncryptionKeys(prisma, new FieldCipher(newKey), key);
      expect(blind.unreadable.length).toBe(before.length);
      expect(await encryptedValues()).toEqual(before);

      const cipher = new FieldCipher(newKey, [oldKey]);
      const report = await rotateEncryptionKeys(prisma, cipher, key);
      expect(report.unreadable).toEqual([]);
      expect(report.tenants.demo).toEqual({
        Patient: 3,
        CompositionVersion: 1,
        DirectoryVersion: 1,
        EhrStatusVersion: 1,
        ItemTag: 1,
        XdsDocument: 1,
        XdsSubmissionSet: 1,
      });
      const after = await encryptedValues();
      expect(after).toHaveLength(before.length);
      const onlyNew = new FieldCipher(newKey);
      expect(after.every((v) => v.split('.')[1] === onlyNew.keyId)).toBe(true);
      const decrypted = after.map((v) => onlyNew.decrypt(v));
      expect(decrypted).toContain('+31612345671');
      // vital_signs.v1 is an operational template: the version holds the canonical COMPOSITION of the posted body.
      expect(decrypted).toEqual(expect.arrayContaining(['follow-up', 'a referral letter']));
      expect(decrypted.some((d) => d.includes('Oncology episode'))).toBe(true);
      expect(decrypted.some((d) => d.includes('"other_details"'))).toBe(true);
      // …and the API reads them with the new key alone.
      const stored = decrypted.filter((d) => d.startsWith('{') && d.includes('"_type":"COMPOSITION"')).map((d) => JSON.parse(d));
      expect(stored).toEqual([
        expect.objectContaining({
          _type: 'COMPOSITION',
          archetype_details: expect.objectContaining({ template_id: { _type: 'TEMPLATE_ID', value: 'vital_signs.v1' } }),
        }),
      ]);
      expect(JSON.stringify(stored[0])).toContain(`"magnitude":${VITALS.blood_pressure.systolic.magnitude}`);

      expect((await rotateEncryptionKeys(prisma, cipher, key)).tenants.demo).toEqual({
        Patient: 0,
        CompositionVersion: 0,
        DirectoryVersion: 0,
        EhrStatusVersion: 0,
        ItemTag: 0,
        XdsDocument: 0,
        XdsSubmissionSet: 0,
      });
      const audit = (
        await t.platform.db!.query<{ action: string; entityId: string }>(
          `SELECT action, "entityId" FROM ehr."AuditRecord" WHERE "tenantId" = 'demo' AND action = 'rotate-keys'`,
        )
      ).rows;
      expect(audit).toEqual([{ action: 'rotate-keys', entityId: onlyNew.keyId }]);
      const chain = await t.graphql('{ verifyAuditChain { valid } }');
      expect(chain.body.data.verifyAuditChain.valid).toBe(true);
    } finally {
      await prisma.$disconnect();
    }
  });
});
