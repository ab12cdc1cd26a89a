import type { Tx } from '../delivery/transitions';
import { parseSettings, reminderCadence } from '../organizations/settings';

type SettingsReader = Pick<Tx, 'organization'>;

/** The tenant's reminder lead times in minutes, longest first: its organisation's cadence (organizations/settings.ts), else a day. */
export async function reminderLeadTimes(db: SettingsReader, tenantId: string): Promise<number[]> {
  const row = await db.organization.findUnique({ where: { id: tenantId }, select: { settings: true } });
  return reminderCadence(row ? parseSettings(row.settings) : parseSettings({}));
}
