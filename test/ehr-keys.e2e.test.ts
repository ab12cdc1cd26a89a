import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { randomBytes } from 'node:crypto';
import { FieldCipher } from '../common/crypto';
import { loadConfig } from '../common/config';
import { createEhrPrisma } from '../subgraphs/ehr/db/client';
import { rotateEncryptionKeys } from '../subgraphs/ehr/keys/rotate';
import { chainKey } from '../subgraphs/ehr/audit/chain';
import { VITALS } from './ehr-fixtures';

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

  const encryptedValues = async () => {
    const db = t.platform.db!;
    const patients = (await db.query<{ v: string }>('SELECT "phoneEnc" AS v FROM ehr."Patient" UNION ALL SELECT "emailEnc" FROM ehr."Patient"')).rows;
    const versions = (await db.query<{ v: string }>('SELECT "contentEnc" AS v FROM ehr."CompositionVersion" WHERE "contentEnc" IS NOT NULL')).rows;
    return [...patients, ...versions].map((r) => r.v).filter(Boolean);
  };

  it('validates PREVIOUS_ENCRYPTION_KEYS', () => {
    expect(loadConfig({ PREVIOUS_ENCRYPTION_KEYS: `${oldKey.toString('base64')}, ${newKey.toString('base64')}` }).PREVIOUS_ENCRYPTION_KEYS).toEqual([
      oldKey,
      newKey,
    ]);
    expect(loadConfig({}).PREVIOUS_ENCRYPTION_KEYS).toEqual([]);
    expect(() => loadConfig({ PREVIOUS_ENCRYPTION_KEYS: 'c2hvcnQ=' })).toThrow(/PREVIOUS_ENCRYPTION_KEYS: key 1 must be base64 of exactly 32 bytes/);
  });

  it('re-encrypts contact details and composition content with the new key, audited and re-runnable', async () => {
    const created = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS } });
    expect(created.status).toBe(201);
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
      expect(report.tenants.demo).toEqual({ patients: 3, compositionVersions: 1 });
      const after = await encryptedValues();
      expect(after).toHaveLength(before.length);
      const onlyNew = new FieldCipher(newKey);
      expect(after.every((v) => v.split('.')[1] === onlyNew.keyId)).toBe(true);
      const decrypted = after.map((v) => onlyNew.decrypt(v));
      expect(decrypted).toContain('+31612345671');
      // vital_signs.v1 is an operational template: the version holds the canonical COMPOSITION of the posted body.
      const stored = decrypted.filter((d) => d.startsWith('{')).map((d) => JSON.parse(d));
      expect(stored).toEqual([
        expect.objectContaining({
          _type: 'COMPOSITION',
          archetype_details: expect.objectContaining({ template_id: { _type: 'TEMPLATE_ID', value: 'vital_signs.v1' } }),
        }),
      ]);
      expect(JSON.stringify(stored[0])).toContain(`"magnitude":${VITALS.blood_pressure.systolic.magnitude}`);

      expect((await rotateEncryptionKeys(prisma, cipher, key)).tenants.demo).toEqual({ patients: 0, compositionVersions: 0 });
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
