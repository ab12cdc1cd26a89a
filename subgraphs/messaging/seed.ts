import type { MessagingPrisma } from './db/client';

const REMINDER_VARIABLES = [
  { name: 'date', type: 'date', required: true },
  { name: 'time', type: 'time', required: true },
  { name: 'location', type: 'string', required: false },
];

/**
 * CONTRACT §10 demo data of messaging: the appointment reminder template (in
 * both demo tenants) and p-1003's preferences (sms off, email on). Runs only
 * when messaging has no template at all. Returns whether it seeded.
 */
export async function seedMessaging(prisma: MessagingPrisma): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(7356114203)');
    if ((await tx.messageTemplate.count()) > 0) return false;
    for (const tenantId of ['demo', 'acme']) {
      const template = {
        tenantId,
        name: 'Appointment reminder',
        channel: 'sms',
        language: 'en',
        version: 1,
        subject: 'Your appointment on {{date}}',
        body: 'Reminder: your appointment is on {{date}} at {{time}}{{#location}} at {{location}}{{/location}}. Reply C to confirm or X to cancel.',
        variables: REMINDER_VARIABLES,
      };
      await tx.messageTemplate.create({ data: { ...template, id: 'appointment-reminder' } });
      await tx.messageTemplateVersion.create({ data: { ...template, templateId: 'appointment-reminder', createdBy: 'seed' } });
    }
    await tx.communicationPreference.create({
      data: { tenantId: 'demo', patientId: 'p-1003', smsEnabled: false, emailEnabled: true, language: 'en' },
    });
    return true;
  });
}
