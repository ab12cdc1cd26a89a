import { createHash } from 'node:crypto';
import type { FieldCipher } from '../../common/crypto';
import type { EhrPrisma } from './db/client';
import { AuditWriter } from './db/store';
import { SEED_TEMPLATES } from './clinical/templates';
import { OPT_DEFINITION } from './templates/clinical-template.service';

const DAY_MS = 86_400_000;
const SEED_ACTOR = 'system:seed';

/** Tomorrow at 09:30 UTC, counted from the moment of seeding. */
function tomorrowAt0930(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + DAY_MS + (9 * 60 + 30) * 60_000);
}

const TENANTS = ['demo', 'acme'];

const PATIENTS = [
  {
    tenantId: 'demo',
    id: 'p-1001',
    ehrId: 'ehr-p-1001',
    givenNames: ['Anna'],
    family: 'de Vries',
    birthDate: '1984-03-12',
    gender: 'female',
    phone: '+31612345671',
    email: 'anna.devries@example.org',
  },
  {
    tenantId: 'demo',
    id: 'p-1002',
    ehrId: 'ehr-p-1002',
    givenNames: ['Bram'],
    family: 'Jansen',
    birthDate: '1971-08-30',
    gender: 'male',
    phone: '+31612340000',
    email: 'bram.jansen@example.org',
  },
  {
    tenantId: 'demo',
    id: 'p-1003',
    ehrId: 'ehr-p-1003',
    givenNames: ['Chloé', 'M.'],
    family: 'Bakker',
    birthDate: '1995-12-01',
    gender: 'female',
    phone: '+31612345673',
    email: 'chloe.bakker@example.org',
  },
  {
    tenantId: 'acme',
    id: 'p-2001',
    ehrId: 'ehr-p-2001',
    givenNames: ['Daan'],
    family: 'Visser',
    birthDate: '1960-05-17',
    gender: 'male',
    phone: '+31612345681',
    email: 'daan.visser@example.org',
  },
];

const APPOINTMENTS = [
  { tenantId: 'demo', id: 'appt-1001', patientId: 'p-1001', location: 'Clinic Amstel, room 2' },
  { tenantId: 'acme', id: 'appt-2001', patientId: 'p-2001', location: 'Acme Health, desk 1' },
];

/**
 * docs/api.md §10 demo data of the clinical record: per tenant the clinical
 * templates, then patients with their EHRs and appointments, each creation in
 * the tenant's audit trail (actor `system:seed`). Runs only on an empty
 * record (no patient in the demo tenants), so it never touches a database in use.
 * Returns whether it seeded.
 */
export async function seedEhr(prisma: EhrPrisma, cipher: FieldCipher, chainKey: Buffer, now = new Date()): Promise<boolean> {
  return prisma.$transaction(
    async (tx) => {
      // Serialise concurrent first starts of several instances.
      await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(7356114202)');
      // Row-level security shows a tenant's rows only while it is set: look into each.
      for (const tenantId of TENANTS) {
        await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
        if ((await tx.patient.count()) > 0) return false;
      }
      const start = tomorrowAt0930(now);
      for (const tenantId of TENANTS) {
        // Row-level security: the rows written next belong to this tenant.
        await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
        const audit = new AuditWriter(tx, tenantId, SEED_ACTOR, 'demo data', chainKey);
        for (const t of SEED_TEMPLATES) {
          // As an OPT upload stores it: the XML, and a definition that marks the row as operational.
          await tx.clinicalTemplate.create({
            data: { tenantId, id: t.id, name: t.name, area: t.area, definition: OPT_DEFINITION, opt: t.opt, createdBy: SEED_ACTOR },
          });
          const sha256 = createHash('sha256').update(t.opt).digest('hex');
          await audit.record({
            action: 'create',
            entityType: 'ClinicalTemplate',
            entityId: t.id,
            after: { name: t.name, area: t.area, format: 'OPT 1.4', sha256 },
          });
        }
        for (const p of PATIENTS.filter((x) => x.tenantId === tenantId)) {
          const { phone, email, ...fields } = p;
          const created = await tx.patient.create({ data: { ...fields, phoneEnc: cipher.encrypt(phone), emailEnc: cipher.encrypt(email) } });
          await tx.ehr.create({ data: { tenantId, id: p.ehrId, patientId: p.id } });
          const { tenantId: _t, createdAt: _c, updatedAt: _u, ...snapshot } = created;
          await audit.record({ action: 'create', entityType: 'Patient', entityId: p.id, after: snapshot });
          await audit.record({ action: 'create', entityType: 'Ehr', entityId: p.ehrId, after: { patientId: p.id, isQueryable: true, isModifiable: true } });
        }
        for (const a of APPOINTMENTS.filter((x) => x.tenantId === tenantId)) {
          const appointment = { ...a, start, end: new Date(start.getTime() + 30 * 60_000), status: 'booked' };
          await tx.appointment.create({ data: appointment });
          await audit.record({ action: 'create', entityType: 'Appointment', entityId: a.id, after: { ...appointment, tenantId: undefined } });
        }
      }
      return true;
    },
    { maxWait: 30_000, timeout: 60_000 },
  );
}
