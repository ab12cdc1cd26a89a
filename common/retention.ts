import { validationError } from './errors';

/**
 * How long each kind of personal data is kept, per tenant. Messaging's periods
 * are part of the organisation's settings; the clinical record keeps its own in
 * `ehr.RetentionSetting`. Both are read through `retentionDays`; the defaults
 * below, and the rule each follows, are documented in docs/privacy.md.
 */
const RETENTION_DEFAULTS = {
  /** Dutch WGBO (Civil Code 7:454): the medical record is kept 20 years from its last change. */
  clinical_record: { days: 7305, rule: 'WGBO (Dutch Civil Code art. 7:454): 20 years' },
  /** The change trail accounts for the record, so it is kept as long as the record. */
  audit: { days: 7305, rule: 'NEN 7510 / WGBO: as long as the record it accounts for' },
  /** NEN 7513 asks for access logs to be kept at least five years. */
  access_log: { days: 1826, rule: 'NEN 7513: at least 5 years' },
  /** Messages are not part of the medical record: storage limitation. */
  messages: { days: 365, rule: 'GDPR art. 5(1)(e) storage limitation: 1 year' },
  /** Delivery logs are only needed to debug integrations. */
  webhook_deliveries: { days: 30, rule: 'GDPR art. 5(1)(e) storage limitation: 30 days' },
} as const;

export type RetentionCategory = keyof typeof RETENTION_DEFAULTS;

export const DAY_MS = 86_400_000;
/** Longest period a tenant may set (100 years); the shortest is 1 day. */
export const MAX_RETENTION_DAYS = 36_525;

export interface RetentionOverride {
  category: string;
  days: number;
}

/** The tenant's period of one category: its override, else the default. */
export function retentionDays(category: RetentionCategory, overrides: readonly RetentionOverride[]): number {
  return overrides.find((o) => o.category === category)?.days ?? RETENTION_DEFAULTS[category].days;
}

/** One category's period as a tenant admin sees it: the days, the rule of the default, and whether the tenant set it. */
export interface RetentionPeriod {
  category: string;
  days: number;
  rule: string;
  source: 'default' | 'tenant';
}

/** The tenant's period of each of `categories`. */
export function retentionPeriods(categories: readonly RetentionCategory[], overrides: readonly RetentionOverride[]): RetentionPeriod[] {
  return categories.map((category) => ({
    category,
    days: retentionDays(category, overrides),
    rule: RETENTION_DEFAULTS[category].rule,
    source: overrides.some((o) => o.category === category) ? 'tenant' : 'default',
  }));
}

/** The moment before which data of that category is due for deletion. */
export function retentionCutoff(now: Date, days: number): Date {
  return new Date(now.getTime() - days * DAY_MS);
}

/** Checks an override a tenant admin sets for one of `allowed`. */
export function parseRetention(category: string, days: number, allowed: readonly RetentionCategory[]): RetentionCategory {
  if (!(allowed as readonly string[]).includes(category))
    throw validationError(`Unknown retention category '${category}'`, [{ path: 'category', message: `one of ${allowed.join(', ')}` }]);
  if (!Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS)
    throw validationError(`'days' must be an integer from 1 to ${MAX_RETENTION_DAYS}`, [{ path: 'days', message: 'out of range' }]);
  return category as RetentionCategory;
}
