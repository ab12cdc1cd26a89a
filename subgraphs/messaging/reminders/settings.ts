import type { Tx } from '../delivery/transitions';
import { DEFAULT_REMINDER_LEAD_MINUTES, parseSettings } from '../organizations/settings';

type SettingsReader = Pick<Tx, 'organization'>;

/** The tenant's reminder lead time in minutes: its organisation's `reminderLeadMinutes`, else a day. */
export async function reminderLeadMinutes(db: SettingsReader, tenantId: string): Promise<number> {
  const row = await db.organization.findUnique({ where: { id: tenantId }, select: { settings: true } });
  return (row ? parseSettings(row.settings).reminderLeadMinutes : undefined) ?? DEFAULT_REMINDER_LEAD_MINUTES;
}
