import DataLoader from 'dataloader';
import type { Identity } from '../../../common/auth/principal';
import { notFound, validationError, type ErrorDetail } from '../../../common/errors';
import type { MessagingPrisma } from '../db/client';
import type { CommunicationPreference, Prisma } from '../db/generated/client';
import type { ClinicalRecord } from '../clinical-record/client';
import { isClockTime } from '../templates/render';
import { isTimeZone } from './quiet-hours';
import { assertAllowed } from '../policy/rules';

export interface PreferencesView {
  channels: { sms: boolean; email: boolean };
  language: string;
  quietHours: { start: string; end: string; timezone: string } | null;
}

/** A patient without a stored row has the defaults: every channel on, English, no quiet hours. */
const DEFAULT_PREFERENCES: PreferencesView = { channels: { sms: true, email: true }, language: 'en', quietHours: null };

export function toPreferencesView(row: CommunicationPreference | null): PreferencesView {
  if (!row) return DEFAULT_PREFERENCES;
  return {
    channels: { sms: row.smsEnabled, email: row.emailEnabled },
    language: row.language,
    quietHours: row.quietStart && row.quietEnd && row.quietZone ? { start: row.quietStart, end: row.quietEnd, timezone: row.quietZone } : null,
  };
}

export interface PreferencesPatch {
  channels?: { sms?: boolean | null; email?: boolean | null } | null;
  language?: string | null;
  /** null clears quiet hours; undefined leaves them. */
  quietHours?: { start: string; end: string; timezone: string } | null;
}

const LANGUAGE = /^[a-z]{2,3}(-[A-Z]{2})?$/;

function validatePatch(patch: PreferencesPatch): void {
  const details: ErrorDetail[] = [];
  if (patch.channels === null) details.push({ path: 'channels', message: 'must be an object' });
  if (patch.language !== undefined && (patch.language === null || !LANGUAGE.test(patch.language))) {
    details.push({ path: 'language', message: "must be a language tag such as 'en' or 'nl-BE'" });
  }
  const quiet = patch.quietHours;
  if (quiet) {
    if (!isClockTime(quiet.start)) details.push({ path: 'quietHours.start', message: 'must be HH:MM (24 h)' });
    if (!isClockTime(quiet.end)) details.push({ path: 'quietHours.end', message: 'must be HH:MM (24 h)' });
    if (!isTimeZone(quiet.timezone)) details.push({ path: 'quietHours.timezone', message: `'${quiet.timezone}' is not an IANA time zone` });
  }
  if (details.length > 0) throw validationError('Invalid preferences', details);
}

type Tx = Prisma.TransactionClient;

/**
 * Applies a change to one patient's preferences inside `tx` and records it in
 * the preference change log (who, how, before, after). Used by the API and by
 * the STOP/START keywords.
 */
export async function changePreferences(
  tx: Tx,
  tenantId: string,
  patientId: string,
  patch: PreferencesPatch,
  actor: string,
  source: 'api' | 'keyword',
): Promise<{ before: PreferencesView; after: PreferencesView }> {
  // Serialises concurrent changes of one patient (the log must see each before/after pair).
  await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(hashtext($1))', `prefs:${tenantId}:${patientId}`);
  const row = await tx.communicationPreference.findUnique({ where: { tenantId_patientId: { tenantId, patientId } } });
  const before = toPreferencesView(row);
  const after: PreferencesView = {
    channels: {
      sms: patch.channels?.sms ?? before.channels.sms,
      email: patch.channels?.email ?? before.channels.email,
    },
    language: patch.language ?? before.language,
    quietHours: patch.quietHours === undefined ? before.quietHours : patch.quietHours,
  };
  if (JSON.stringify(before) === JSON.stringify(after)) return { before, after };
  const data = {
    smsEnabled: after.channels.sms,
    emailEnabled: after.channels.email,
    language: after.language,
    quietStart: after.quietHours?.start ?? null,
    quietEnd: after.quietHours?.end ?? null,
    quietZone: after.quietHours?.timezone ?? null,
  };
  await tx.communicationPreference.upsert({ where: { tenantId_patientId: { tenantId, patientId } }, create: { tenantId, patientId, ...data }, update: data });
  await tx.preferenceChange.create({
    data: { tenantId, patientId, actor, source, before: before as unknown as Prisma.InputJsonValue, after: after as unknown as Prisma.InputJsonValue },
  });
  return { before, after };
}

export class PreferenceService {
  private readonly loader: DataLoader<string, CommunicationPreference | null>;

  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly clinical: ClinicalRecord,
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
    assertAllowed(this.identity, 'read', 'preferences', patientId);
    return toPreferencesView(await this.loader.load(patientId));
  }

  /** PATCH semantics: fields left out stay; staff change anyone's, a patient only their own. */
  async update(patientId: string, patch: PreferencesPatch): Promise<PreferencesView> {
    assertAllowed(this.identity, 'write', 'preferences', patientId);
    validatePatch(patch);
    const found = await this.clinical.patients(this.identity.tenantId, [patientId]);
    if (!found.has(patientId)) throw notFound('Patient', patientId);
    const { after } = await this.prisma.$transaction((tx) => changePreferences(tx, this.identity.tenantId, patientId, patch, this.identity.sub, 'api'));
    this.loader.clear(patientId);
    return after;
  }
}
