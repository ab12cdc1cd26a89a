import { validationError } from '../../../common/errors';
import type { Tx } from '../delivery/transitions';

/** How long before an appointment its reminder goes out when the tenant has set nothing: a day. */
const DEFAULT_REMINDER_LEAD_MINUTES = 24 * 60;
/** Longest lead time a tenant may set: two weeks. */
const MAX_REMINDER_LEAD_MINUTES = 14 * 24 * 60;

type SettingsReader = Pick<Tx, 'reminderSetting'>;

/**
 * The tenant's reminder lead time in minutes. The one place that reads it:
 * when tenant settings move to the organisation record, only this changes.
 */
export async function reminderLeadMinutes(db: SettingsReader, tenantId: string): Promise<number> {
  const row = await db.reminderSetting.findUnique({ where: { tenantId } });
  return row?.leadMinutes ?? DEFAULT_REMINDER_LEAD_MINUTES;
}

/** Checks a lead time a tenant admin sets: whole minutes, 0 (at booking) to two weeks. */
export function checkLeadMinutes(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_REMINDER_LEAD_MINUTES) {
    throw validationError(`leadMinutes must be a whole number from 0 to ${MAX_REMINDER_LEAD_MINUTES}`, [
      { path: 'leadMinutes', message: `'${value}' is out of range` },
    ]);
  }
  return value;
}
