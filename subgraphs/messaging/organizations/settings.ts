import { z } from 'zod';
import { RATE_LIMIT_CATEGORIES, type RateLimitCategory } from '../../../common/config';
import { validationError, zodDetails } from '../../../common/errors';
import { MAX_RETENTION_DAYS, type RetentionCategory } from '../../../common/retention';
import { validateReplyKeywords, type ReplyKeywords } from '../replies/keywords';

const CATEGORIES = Object.keys(RATE_LIMIT_CATEGORIES) as RateLimitCategory[];

/** A per-minute limit arranged with the provider: a whole number, bounded so one tenant cannot be made unlimited by a typo. */
const limit = z.number().int('must be a whole number').min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000');

/** How long before an appointment its reminder goes out when the tenant has set nothing: a day. */
const DEFAULT_REMINDER_LEAD_MINUTES = 24 * 60;
/** Longest lead time a tenant may set: two weeks. */
const MAX_REMINDER_LEAD_MINUTES = 14 * 24 * 60;
/** Most reminders a cadence may send per appointment. */
const MAX_REMINDER_LEAD_TIMES = 10;

/** The retention categories whose data messaging holds (the clinical record keeps its own, see docs/privacy.md). */
export const MESSAGING_RETENTION_CATEGORIES = ['messages', 'webhook_deliveries'] as const satisfies readonly RetentionCategory[];

const leadMinutes = z
  .number()
  .int('must be a whole number')
  .min(0, 'must be at least 0')
  .max(MAX_REMINDER_LEAD_MINUTES, `must be at most ${MAX_REMINDER_LEAD_MINUTES}`);
const leadTimes = z
  .array(leadMinutes)
  .min(1, 'must name at least one lead time')
  .max(MAX_REMINDER_LEAD_TIMES, `must name at most ${MAX_REMINDER_LEAD_TIMES} lead times`)
  .refine((list) => new Set(list).size === list.length, 'must not repeat a lead time');
const retentionDays = z.number().int('must be a whole number').min(1, 'must be at least 1').max(MAX_RETENTION_DAYS, `must be at most ${MAX_RETENTION_DAYS}`);

/**
 * The shape of an organisation's settings (the `settings` JSON column). Unknown
 * keys are refused, so a misspelt setting is an error rather than silently ignored.
 * `rateLimits` overrides the deployment's per-minute limits for this tenant only;
 * `reminderLeadMinutes` (one lead time) or `reminderLeadTimes` (a cadence, several; it wins when both are set)
 * and `retention` (days per messaging category) override
 * the defaults of automatic reminders and of the messaging retention purge; `replyKeywords` adds the tenant's own
 * reply keywords per language and action (`{nl: {optOut: ['UITSCHRIJVEN']}}`, replies/keywords.ts).
 */
const organizationSettingsSchema = z
  .object({
    rateLimits: z
      .object(Object.fromEntries(CATEGORIES.map((category) => [category, limit.optional()])) as Record<RateLimitCategory, z.ZodOptional<typeof limit>>)
      .strict()
      .default({}),
    supportEmail: z.string().email('must be an e-mail address').max(254).optional(),
    reminderLeadMinutes: leadMinutes.optional(),
    reminderLeadTimes: leadTimes.optional(),
    retention: z
      .object(
        Object.fromEntries(MESSAGING_RETENTION_CATEGORIES.map((category) => [category, retentionDays.optional()])) as Record<
          (typeof MESSAGING_RETENTION_CATEGORIES)[number],
          z.ZodOptional<typeof retentionDays>
        >,
      )
      .strict()
      .default({}),
    replyKeywords: z
      .custom<ReplyKeywords>()
      .optional()
      .superRefine((value, ctx) => {
        if (value === undefined) return;
        for (const detail of validateReplyKeywords(value)) ctx.addIssue({ code: 'custom', path: detail.path!.split('.').slice(1), message: detail.message });
      }),
  })
  .strict();

export type OrganizationSettings = z.infer<typeof organizationSettingsSchema>;

/** Parses settings from input or storage; VALIDATION_ERROR with a detail per broken path. */
export function parseSettings(value: unknown): OrganizationSettings {
  const parsed = organizationSettingsSchema.safeParse(value ?? {});
  if (!parsed.success) throw validationError('Invalid organisation settings', zodDetails(parsed.error.issues));
  return parsed.data;
}

/** The tenant's reminder cadence: its lead times in minutes, longest first (`reminderLeadTimes`, else the one `reminderLeadMinutes`, else a day). */
export function reminderCadence(settings: OrganizationSettings): number[] {
  const list = settings.reminderLeadTimes ?? [settings.reminderLeadMinutes ?? DEFAULT_REMINDER_LEAD_MINUTES];
  return [...list].sort((a, b) => b - a);
}

/** The tenant's retention overrides as `retentionDays` (common/retention.ts) takes them. */
export function retentionOverrides(settings: OrganizationSettings): Array<{ category: string; days: number }> {
  return Object.entries(settings.retention).flatMap(([category, days]) => (days === undefined ? [] : [{ category, days }]));
}
