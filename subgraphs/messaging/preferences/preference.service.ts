import DataLoader from 'dataloader';
import type { Identity } from '../../../common/auth/principal';
import type { MessagingPrisma } from '../db/client';
import type { CommunicationPreference } from '../db/generated/client';

export interface PreferencesView {
  channels: { sms: boolean; email: boolean };
  language: string;
  quietHours: { start: string; end: string; timezone: string } | null;
}

/** A patient without a stored row has the defaults: every channel on, English, no quiet hours. */
export const DEFAULT_PREFERENCES: PreferencesView = { channels: { sms: true, email: true }, language: 'en', quietHours: null };

export function toPreferencesView(row: CommunicationPreference | null): PreferencesView {
  if (!row) return DEFAULT_PREFERENCES;
  return {
    channels: { sms: row.smsEnabled, email: row.emailEnabled },
    language: row.language,
    quietHours: row.quietStart && row.quietEnd && row.quietZone ? { start: row.quietStart, end: row.quietEnd, timezone: row.quietZone } : null,
  };
}

export class PreferenceService {
  private readonly loader: DataLoader<string, CommunicationPreference | null>;

  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly identity: Identity,
  ) {
    this.loader = new DataLoader(async (patientIds) => {
      const rows = await prisma.communicationPreference.findMany({
        where: { tenantId: identity.tenantId, patientId: { in: [...patientIds] } },
      });
      const byPatient = new Map(rows.map((row) => [row.patientId, row]));
      return patientIds.map((id) => byPatient.get(id) ?? null);
    });
  }

  async forPatient(patientId: string): Promise<PreferencesView> {
    return toPreferencesView(await this.loader.load(patientId));
  }
}
