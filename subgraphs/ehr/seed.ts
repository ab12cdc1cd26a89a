import type { FieldCipher } from '../../common/crypto';
import type { EhrPrisma } from './db/client';

const DAY_MS = 86_400_000;

/** Tomorrow at 09:30 UTC, counted from the moment of seeding. */
export function tomorrowAt0930(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + DAY_MS + (9 * 60 + 30) * 60_000);
}

const PATIENTS = [
  { tenantId: 'demo', id: 'p-1001', ehrId: 'ehr-p-1001', givenNames: ['Anna'], family: 'de Vries', birthDate: '1984-03-12', gender: 'female', phone: '+31612345671', email: 'anna.devries@example.org' },
  { tenantId: 'demo', id: 'p-1002', ehrId: 'ehr-p-1002', givenNames: ['Bram'], family: 'Jansen', birthDate: '1971-08-30', gender: 'male', phone: '+31612340000', email: 'bram.jansen@example.org' },
  { tenantId: 'demo', id: 'p-1003', ehrId: 'ehr-p-1003', givenNames: ['Chloé', 'M.'], family: 'Bakker', birthDate: '1995-12-01', gender: 'female', phone: '+31612345673', email: 'chloe.bakker@example.org' },
  { tenantId: 'acme', id: 'p-2001', ehrId: 'ehr-p-2001', givenNames: ['Daan'], family: 'Visser', birthDate: '1960-05-17', gender: 'male', phone: '+31612345681', email: 'daan.visser@example.org' },
];

/**
 * CONTRACT §10 demo data of the clinical record. Runs only on an empty record
 * (no patient in any tenant), so it never touches a database in use.
 * Returns whether it seeded.
 */
export async function seedEhr(prisma: EhrPrisma, cipher: FieldCipher, now = new Date()): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    // Serialise concurrent first starts of several instances.
    await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(7356114202)');
    if ((await tx.patient.count()) > 0) return false;
    for (const p of PATIENTS) {
      await tx.patient.create({
        data: {
          tenantId: p.tenantId,
          id: p.id,
          ehrId: p.ehrId,
          givenNames: p.givenNames,
          family: p.family,
          birthDate: p.birthDate,
          gender: p.gender,
          phoneEnc: cipher.encrypt(p.phone),
          emailEnc: cipher.encrypt(p.email),
        },
      });
    }
    const start = tomorrowAt0930(now);
    await tx.appointment.create({
      data: { tenantId: 'demo', id: 'appt-1001', patientId: 'p-1001', start, end: new Date(start.getTime() + 30 * 60_000), status: 'booked', location: 'Clinic Amstel, room 2' },
    });
    await tx.appointment.create({
      data: { tenantId: 'acme', id: 'appt-2001', patientId: 'p-2001', start, end: new Date(start.getTime() + 30 * 60_000), status: 'booked', location: 'Acme Health, desk 1' },
    });
    return true;
  });
}
