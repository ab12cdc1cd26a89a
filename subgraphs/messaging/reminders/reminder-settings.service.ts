import type { OrganizationService } from '../organizations/organization.service';
import { DEFAULT_REMINDER_LEAD_MINUTES } from '../organizations/settings';

/**
 * The tenant's reminder settings (admins): how long before an appointment its automatic reminder goes out.
 * Kept in the organisation's settings, so a change is validated and logged as an organisation change.
 */
export class ReminderSettingsService {
  constructor(private readonly organizations: OrganizationService) {}

  async get(): Promise<{ leadMinutes: number }> {
    const settings = await this.organizations.ownSettings('manageReminderSettings');
    return { leadMinutes: settings.reminderLeadMinutes ?? DEFAULT_REMINDER_LEAD_MINUTES };
  }

  /** Applies to reminders scheduled from now on (bookings and reschedules); already scheduled ones keep their time. */
  async setLeadMinutes(leadMinutes: number, reason?: string | null): Promise<{ leadMinutes: number }> {
    const settings = await this.organizations.updateOwnSettings(
      'manageReminderSettings',
      (current) => ({ ...current, reminderLeadMinutes: leadMinutes }),
      reason,
    );
    return { leadMinutes: settings.reminderLeadMinutes ?? DEFAULT_REMINDER_LEAD_MINUTES };
  }
}
