/**
 * Re-encrypts the encrypted columns of the clinical record and of messaging
 * with the current key (and encrypts messaging content still stored in plaintext).
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
import { createMessagingPrisma } from '../subgraphs/messaging/db/client';
import { sealMessagingContent } from '../subgraphs/messaging/keys/seal';
import { chainKey } from '../subgraphs/ehr/audit/chain';

export async function main(argv: string[]): Promise<number> {
  const unknown = argv.filter((a) => a !== '--dry-run');
  if (unknown.length > 0) {
    console.error(`usage: npm run keys:rotate [-- --dry-run]   (unknown: ${unknown.join(' ')})`);
    return 2;
  }
  const config = loadConfig();
  const secrets = resolveSecrets(config);
  const cipher = new FieldCipher(secrets.encryptionKey, config.PREVIOUS_ENCRYPTION_KEYS);
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, ownerUrl: config.DATABASE_OWNER_URL, dataDir: config.DATA_DIR, poolSize: 2 });
  const prisma = createEhrPrisma(db);
  const messaging = createMessagingPrisma(db);
  try {
    await migrate(db, 'ehr');
    await migrate(db, 'messaging');
    console.log(`current key ${cipher.keyId}; ${config.PREVIOUS_ENCRYPTION_KEYS.length} previous key(s) accepted for reading`);
    const dryRun = argv.includes('--dry-run');
    const report = await rotateEncryptionKeys(prisma, cipher, chainKey(secrets.auditKey), { dryRun, log: (m) => console.log(m) });
    const messagingReport = await sealMessagingContent(messaging, cipher, { rotate: true, dryRun, log: (m) => console.log(`messaging ${m}`) });
    const unreadable = [...report.unreadable, ...messagingReport.unreadable];
    if (unreadable.length > 0) {
      console.error(`${unreadable.length} value(s) could not be decrypted with any configured key (add the key to PREVIOUS_ENCRYPTION_KEYS):`);
      for (const u of unreadable.slice(0, 20)) console.error(`  ${u.tenantId} ${u.table} ${u.key}`);
      return 1;
    }
    return 0;
  } finally {
    await messaging.$disconnect();
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
