import type { OrganizationService } from '../organizations/organization.service';
import { reminderCadence, type OrganizationSettings } from '../organizations/settings';

export interface ReminderSettingsView {
  /** The longest lead time (the single one when the cadence has one). */
  leadMinutes: number;
  /** Every lead time of the cadence in minutes, longest first. */
  leadTimes: number[];
}

function view(settings: OrganizationSettings): ReminderSettingsView {
  const leadTimes = reminderCadence(settings);
  return { leadMinutes: leadTimes[0], leadTimes };
}

/**
 * The tenant's reminder settings (admins): how long before an appointment its automatic reminders go out.
 * Kept in the organisation's settings, so a change is validated and logged as an organisation change.
 * Setting one lead time or a cadence replaces the other, so the stored settings never hold both.
 */
export class ReminderSettingsService {
  constructor(private readonly organizations: OrganizationService) {}

  async get(): Promise<ReminderSettingsView> {
    return view(await this.organizations.ownSettings('manageReminderSettings'));
  }

  /** Applies to reminders scheduled from now on (bookings and reschedules); already scheduled ones keep their time. */
  async setLeadMinutes(leadMinutes: number, reason?: string | null): Promise<ReminderSettingsView> {
    const settings = await this.organizations.updateOwnSettings(
      'manageReminderSettings',
      ({ reminderLeadTimes: _replaced, ...current }) => ({ ...current, reminderLeadMinutes: leadMinutes }),
      reason,
    );
    return view(settings);
  }

  /** A cadence: one reminder per lead time; like `setLeadMinutes`, for reminders scheduled from now on. */
  async setLeadTimes(leadTimes: number[], reason?: string | null): Promise<ReminderSettingsView> {
    const settings = await this.organizations.updateOwnSettings(
      'manageReminderSettings',
      ({ reminderLeadMinutes: _replaced, ...current }) => ({ ...current, reminderLeadTimes: leadTimes }),
      reason,
    );
    return view(settings);
  }
}
