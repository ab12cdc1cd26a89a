import { loadConfig } from '../../common/config';
import { resolveSecrets } from '../../common/secrets';
import { FieldCipher } from '../../common/crypto';
import { openDatabase } from '../../common/db/database';
import { migrateAll } from '../../common/db/migrate';
import { tenantClient } from '../../common/db/tenant-session';
import { createEhrPrisma } from '../../subgraphs/ehr/db/client';
import { createMessagingPrisma } from '../../subgraphs/messaging/db/client';
import { seedEhr } from '../../subgraphs/ehr/seed';
import { chainKey } from '../../subgraphs/ehr/audit/chain';
import { seedMessaging } from '../../subgraphs/messaging/seed';

const TENANT = 'demo';
const CHUNK = 1000;
const HOUR = 3_600_000;

export interface SeedPlan {
  /** Patients with messages and upcoming appointments (ids bench-p-<n>). */
  patients: number;
  messagesPerPatient: number;
  appointmentsPerPatient: number;
  /** Patients whose quiet hours hold every message sent during the run (nothing gets delivered). */
  heldPatients: number;
}

export interface SeededData {
  patientIds: string[];
  heldPatientIds: string[];
  /** Newest messages first (what GET /v1/messages/{id} rotates through). */
  messageIds: string[];
}

const pad = (n: number) => String(n).padStart(6, '0');

/**
 * Writes bench data straight into the embedded database of DATA_DIR (or the
 * PostgreSQL database of `databaseUrl`) with the subgraphs' own Prisma clients
 * (far faster than the API), before the server starts. `fromPatient` lets a second call add more of the same (the 10× data step).
 */
export async function seedBenchData(dataDir: string, plan: SeedPlan, fromPatient = 0, databaseUrl?: string): Promise<SeededData> {
  const config = loadConfig({ DATA_DIR: dataDir });
  const secrets = resolveSecrets(config);
  const cipher = new FieldCipher(secrets.encryptionKey);
  const db = await openDatabase({ dataDir, databaseUrl });
  try {
    await migrateAll(db);
    const ehrBase = createEhrPrisma(db);
    const messagingBase = createMessagingPrisma(db);
    await seedEhr(ehrBase, cipher, chainKey(secrets.auditKey));
    await seedMessaging(messagingBase);
    // Row-level security: the bench rows are written with their tenant set.
    const ehr = tenantClient(ehrBase, TENANT);
    const messaging = tenantClient(messagingBase, TENANT);
    const now = Date.now();
    const patientIds = Array.from({ length: plan.patients }, (_, i) => `bench-p-${pad(fromPatient + i)}`);
    const heldPatientIds = fromPatient === 0 ? Array.from({ length: plan.heldPatients }, (_, i) => `bench-held-${pad(i)}`) : [];
    const everyone = [...patientIds, ...heldPatientIds];

    for (let i = 0; i < everyone.length; i += CHUNK) {
      const ids = everyone.slice(i, i + CHUNK);
      await ehr.patient.createMany({
        data: ids.map((id, k) => ({
          tenantId: TENANT,
          id,
          ehrId: `ehr-${id}`,
          givenNames: ['Bench'],
          family: `Patient ${id.slice(-6)}`,
          birthDate: '1980-01-01',
          gender: 'unknown',
          // Deliverable numbers (the simulator fails those ending in 0000).
          phoneEnc: cipher.encrypt(`+316${String((i + k) % 1_000_000).padStart(6, '0')}5`),
          emailEnc: cipher.encrypt(`${id}@bench.example.org`),
        })),
      });
      await ehr.ehr.createMany({ data: ids.map((id) => ({ tenantId: TENANT, id: `ehr-${id}`, patientId: id })) });
    }

    const appointments = patientIds.flatMap((patientId, p) =>
      Array.from({ length: plan.appointmentsPerPatient }, (_, a) => {
        const start = new Date(now + (24 + ((p + a * 7) % 500)) * HOUR);
        return {
          tenantId: TENANT,
          id: `appt-${patientId}-${a}`,
          patientId,
          start,
          end: new Date(start.getTime() + HOUR / 2),
          status: a === 0 ? 'confirmed' : 'booked',
          location: 'Bench clinic',
        };
      }),
    );
    for (let i = 0; i < appointments.length; i += CHUNK) await ehr.appointment.createMany({ data: appointments.slice(i, i + CHUNK) });

    // Quiet hours around the whole run: messages to these patients wait in `queued` (send benchmarks create no delivery work).
    const hour = new Date(now).getUTCHours();
    const hhmm = (h: number) => `${String(((h % 24) + 24) % 24).padStart(2, '0')}:00`;
    if (heldPatientIds.length > 0) {
      await messaging.communicationPreference.createMany({
        data: heldPatientIds.map((patientId) => ({ tenantId: TENANT, patientId, quietStart: hhmm(hour - 1), quietEnd: hhmm(hour + 3), quietZone: 'UTC' })),
      });
    }

    // Messages round-robin over patients, newest last, so any 20 newest name 20 different patients.
    const total = patientIds.length * plan.messagesPerPatient;
    const messageIds: string[] = [];
    for (let i = 0; i < total; i += CHUNK) {
      const rows = Array.from({ length: Math.min(CHUNK, total - i) }, (_, k) => {
        const n = i + k;
        const patientId = patientIds[n % patientIds.length];
        const createdAt = new Date(now - HOUR - (total - n) * 1000);
        return {
          tenantId: TENANT,
          id: `bench-m-${pad(fromPatient * plan.messagesPerPatient + n)}`,
          patientId,
          templateId: 'appointment-reminder',
          channel: 'sms',
          // Message content is encrypted at rest, as the service writes it.
          variablesEnc: cipher.encrypt(JSON.stringify({ date: '2027-01-15', time: '09:30' })),
          bodyEnc: cipher.encrypt('Reminder: your appointment is on 2027-01-15 at 09:30. Reply C to confirm or X to cancel.'),
          status: 'delivered',
          dueAt: createdAt,
          createdAt,
        };
      });
      await messaging.message.createMany({ data: rows });
      await messaging.messageStatusChange.createMany({
        data: rows.flatMap((m) =>
          ['queued', 'sent', 'delivered'].map((status, s) => ({ tenantId: TENANT, messageId: m.id, status, at: new Date(m.createdAt.getTime() + s * 500) })),
        ),
      });
      messageIds.push(...rows.map((m) => m.id));
    }
    await ehrBase.$disconnect();
    await messagingBase.$disconnect();
    // Planner statistics, as autovacuum keeps them on a live server (embedded PGlite runs no autovacuum).
    await db.exec('ANALYZE');
    return { patientIds, heldPatientIds, messageIds: messageIds.reverse() };
  } finally {
    await db.close();
  }
}
