import { FieldCipher } from '../../common/crypto';
import { loadClinicalCompositions } from '../../bench/lib/clinical-load';
import type { TestPlatform } from '../harness';
import { scrape } from './metrics';

/**
 * Bulk-loads `patients × perPatient` vital-sign and lab compositions straight into a test platform's
 * database (the benchmark's loader: canonical form, cipher and index rows, no HTTP); answers how many.
 * The loaded tables are then analyzed, as autovacuum (PostgreSQL) or the embedded statistics refresh
 * (PGlite, every minute) would do a little later: without it, the first queries are planned on the
 * statistics of empty tables and run several times slower than they do for a user.
 */
export async function loadCompositions(t: TestPlatform, load: { patients: number; perPatient: number; now: Date; days: number }): Promise<number> {
  const db = t.platform.db!;
  const loaded = await loadClinicalCompositions(db, new FieldCipher(t.platform.runtime.secrets.encryptionKey), {
    fromPatient: 0,
    patients: load.patients,
    compositionsPerPatient: load.perPatient,
    systemId: t.platform.runtime.config.OPENEHR_SYSTEM_ID,
    now: load.now,
    days: load.days,
  });
  await db.query('ANALYZE ehr."Ehr", ehr."Composition", ehr."CompositionVersion", ehr."ClinicalIndexEntry"');
  return loaded;
}

/** How many compositions the platform has decrypted so far (its metric): clinical queries are checked by the difference. */
export const compositionDecrypts = async (t: TestPlatform) => (await scrape(`${t.url}/metrics`)).total('caregraph_composition_decrypts_total');
