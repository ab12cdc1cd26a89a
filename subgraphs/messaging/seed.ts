import type { MessagingPrisma } from './db/client';

const TENANTS = ['demo', 'acme'];

const REMINDER_VARIABLES = [
  { name: 'date', type: 'date', required: true },
  { name: 'time', type: 'time', required: true },
  { name: 'location', type: 'string', required: false },
  { name: 'when', type: 'string', required: false },
];

/** The seeded reminder's text: `when` (reminders/when.ts) says how far ahead the appointment is, left out when not given. */
export const REMINDER_BODY =
  'Reminder: your appointment is {{#when}}{{when}}, {{/when}}on {{date}} at {{time}}{{#location}} at {{location}}{{/location}}. Reply C to confirm or X to cancel.';

/**
 * docs/api.md §10 demo data of messaging: the appointment reminder template (in
 * both demo tenants) and p-1003's preferences (sms off, email on). Runs only
 * when the demo tenants have no template. Returns whether it seeded.
 */
export async function seedMessaging(prisma: MessagingPrisma): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(7356114203)');
    // Row-level security shows a tenant's rows only while it is set: look into each.
    for (const tenantId of TENANTS) {
      await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
      if ((await tx.messageTemplate.count()) > 0) return false;
    }
    for (const tenantId of TENANTS) {
      await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
      const template = {
        tenantId,
        name: 'Appointment reminder',
        channel: 'sms',
        language: 'en',
        version: 1,
        subject: 'Your appointment on {{date}}',
        body: REMINDER_BODY,
        variables: REMINDER_VARIABLES,
      };
      await tx.messageTemplate.create({ data: { ...template, id: 'appointment-reminder' } });
      await tx.messageTemplateVersion.create({ data: { ...template, templateId: 'appointment-reminder', createdBy: 'seed' } });
    }
    await tx.$queryRaw`SELECT set_config('app.tenant_id', 'demo', true)`;
    await tx.communicationPreference.create({
      data: { tenantId: 'demo', patientId: 'p-1003', smsEnabled: false, emailEnabled: true, language: 'en' },
    });
    return true;
  });
}
