import { z } from 'zod';
import { RATE_LIMIT_CATEGORIES, type RateLimitCategory } from '../../../common/config';
import { validationError, zodDetails } from '../../../common/errors';

const CATEGORIES = Object.keys(RATE_LIMIT_CATEGORIES) as RateLimitCategory[];

/** A per-minute limit arranged with the provider: a whole number, bounded so one tenant cannot be made unlimited by a typo. */
const limit = z.number().int('must be a whole number').min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000');

/**
 * The shape of an organisation's settings (the `settings` JSON column). Unknown
 * keys are refused, so a misspelt setting is an error rather than silently ignored.
 * `rateLimits` overrides the deployment's per-minute limits for this tenant only.
 */
const organizationSettingsSchema = z
  .object({
    rateLimits: z
      .object(Object.fromEntries(CATEGORIES.map((category) => [category, limit.optional()])) as Record<RateLimitCategory, z.ZodOptional<typeof limit>>)
      .strict()
      .default({}),
    supportEmail: z.string().email('must be an e-mail address').max(254).optional(),
  })
  .strict();

export type OrganizationSettings = z.infer<typeof organizationSettingsSchema>;

/** Parses settings from input or storage; VALIDATION_ERROR with a detail per broken path. */
export function parseSettings(value: unknown): OrganizationSettings {
  const parsed = organizationSettingsSchema.safeParse(value ?? {});
  if (!parsed.success) throw validationError('Invalid organisation settings', zodDetails(parsed.error.issues));
  return parsed.data;
}
