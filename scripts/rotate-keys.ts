/**
 * Re-encrypts the clinical record's encrypted columns with the current key.
 *
 *   ENCRYPTION_KEY=<new> PREVIOUS_ENCRYPTION_KEYS=<old>[,<older>] npm run keys:rotate [-- --dry-run]
 *
 * Reads old values with any key in PREVIOUS_ENCRYPTION_KEYS, writes them with
 * ENCRYPTION_KEY, and exits non-zero when a value could not be read (its key is
 * missing). Safe to run while the service runs with the same settings, and to re-run.
 */
import { FieldCipher } from '../common/crypto';
import { loadConfig } from '../common/config';
import { resolveSecrets } from '../common/secrets';
import { openDatabase } from '../common/db/database';
import { migrate } from '../common/db/migrate';
import { createEhrPrisma } from '../subgraphs/ehr/db/client';
import { rotateEncryptionKeys } from '../subgraphs/ehr/keys/rotate';

export async function main(argv: string[]): Promise<number> {
  const unknown = argv.filter((a) => a !== '--dry-run');
  if (unknown.length > 0) {
    console.error(`usage: npm run keys:rotate [-- --dry-run]   (unknown: ${unknown.join(' ')})`);
    return 2;
  }
  const config = loadConfig();
  const secrets = resolveSecrets(config);
  const cipher = new FieldCipher(secrets.encryptionKey, config.PREVIOUS_ENCRYPTION_KEYS);
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: 2 });
  const prisma = createEhrPrisma(db);
  try {
    await migrate(db, 'ehr');
    console.log(`current key ${cipher.keyId}; ${config.PREVIOUS_ENCRYPTION_KEYS.length} previous key(s) accepted for reading`);
    const report = await rotateEncryptionKeys(prisma, cipher, { dryRun: argv.includes('--dry-run'), log: (m) => console.log(m) });
    if (report.unreadable.length > 0) {
      console.error(`${report.unreadable.length} value(s) could not be decrypted with any configured key (add the key to PREVIOUS_ENCRYPTION_KEYS):`);
      for (const u of report.unreadable.slice(0, 20)) console.error(`  ${u.tenantId} ${u.table} ${u.key}`);
      return 1;
    }
    return 0;
  } finally {
    await prisma.$disconnect();
    await db.close();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
