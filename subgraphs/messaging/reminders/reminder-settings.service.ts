import type { Identity } from '../../../common/auth/principal';
import type { MessagingPrisma } from '../db/client';
import { assertCan } from '../policy/rules';
import { checkLeadMinutes, reminderLeadMinutes } from './settings';

/** The tenant's reminder settings (admins): how long before an appointment its automatic reminder goes out. */
export class ReminderSettingsService {
  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly identity: Identity,
  ) {}

  async get(): Promise<{ leadMinutes: number }> {
    assertCan(this.identity, 'manageReminderSettings');
    return { leadMinutes: await reminderLeadMinutes(this.prisma, this.identity.tenantId) };
  }

  /** Applies to reminders scheduled from now on (bookings and reschedules); already scheduled ones keep their time. */
  async setLeadMinutes(value: number): Promise<{ leadMinutes: number }> {
    assertCan(this.identity, 'manageReminderSettings');
    const leadMinutes = checkLeadMinutes(value);
    const { tenantId } = this.identity;
    await this.prisma.reminderSetting.upsert({ where: { tenantId }, create: { tenantId, leadMinutes }, update: { leadMinutes } });
    return { leadMinutes };
  }
}
