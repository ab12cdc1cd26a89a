import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { MessagingContext } from '../context';
import type { OrganizationView } from './organization.service';
import { retentionOverrides } from './settings';
import {
  Organization,
  OrganizationActivity,
  OrganizationChangeView,
  OrganizationHealth,
  OrganizationList,
  OrganizationSettingsInput,
  OrganizationSettingsView,
  RateLimitInForceView,
  ReplyKeywordsInput,
  Viewer,
} from './organization.types';
import { validationError } from '../../../common/errors';

/** GraphQL's settings input as the stored shape: lists of limits and periods become maps by category. */
function settingsOf(input: OrganizationSettingsInput | null | undefined): unknown {
  if (!input) return undefined;
  return {
    rateLimits: Object.fromEntries((input.rateLimits ?? []).map((r) => [r.category, r.limit])),
    ...(input.supportEmail != null ? { supportEmail: input.supportEmail } : {}),
    ...(input.reminderLeadMinutes != null ? { reminderLeadMinutes: input.reminderLeadMinutes } : {}),
    ...(input.reminderLeadTimes != null ? { reminderLeadTimes: input.reminderLeadTimes } : {}),
    retention: Object.fromEntries((input.retention ?? []).map((r) => [r.category, r.days])),
    ...(input.replyKeywords ? { replyKeywords: replyKeywordsOf(input.replyKeywords) } : {}),
  };
}

/** The input's list (one entry per language) as the setting's object; a language given twice is refused. */
function replyKeywordsOf(input: ReplyKeywordsInput[]): Record<string, { optOut: string[]; optIn: string[]; help: string[] }> {
  const languages = input.map((k) => k.language);
  const twice = languages.find((language, i) => languages.indexOf(language) !== i);
  if (twice !== undefined) throw validationError('Invalid organisation settings', [{ path: 'replyKeywords', message: `language '${twice}' given twice` }]);
  return Object.fromEntries(input.map((k) => [k.language, { optOut: k.optOut ?? [], optIn: k.optIn ?? [], help: k.help ?? [] }]));
}

@Resolver(() => Organization)
export class OrganizationResolver {
  @Query(() => Viewer, { description: 'Who is calling: subject, roles, tenants and token expiry (any authenticated caller).' })
  viewer(@Ctx() ctx: MessagingContext) {
    const { sub, roles, tenants, tenantId, exp } = ctx.identity;
    return { subject: sub, roles, tenants: tenants ?? [], tenantId, tokenExpiresAt: exp !== undefined ? new Date(exp * 1000) : null };
  }

  @Query(() => OrganizationList, { description: 'Platform admin: every tenant.' })
  async organizations(@Ctx() ctx: MessagingContext) {
    return { data: await ctx.organizations.list() };
  }

  @Query(() => Organization, { description: 'One tenant: platform admins any, support and admins their own; NOT_FOUND otherwise.' })
  organization(@Arg('id', () => ID) id: string, @Ctx() ctx: MessagingContext) {
    return ctx.organizations.get(id);
  }

  @Mutation(() => Organization, { description: 'Platform admin: a new tenant, active at once; CONFLICT when the id exists.' })
  createOrganization(
    @Arg('id', () => ID) id: string,
    @Arg('name', () => String) name: string,
    @Arg('settings', () => OrganizationSettingsInput, { nullable: true }) settings: OrganizationSettingsInput | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.organizations.create({ id, name, settings: settingsOf(settings), reason });
  }

  @Mutation(() => Organization, { description: 'Platform admin: every call in the tenant is refused (403) until it is resumed.' })
  suspendOrganization(@Arg('id', () => ID) id: string, @Arg('reason', () => String, { nullable: true }) reason: string | null, @Ctx() ctx: MessagingContext) {
    return ctx.organizations.suspend(id, reason);
  }

  @Mutation(() => Organization, { description: 'Platform admin: serves a suspended tenant again.' })
  resumeOrganization(@Arg('id', () => ID) id: string, @Arg('reason', () => String, { nullable: true }) reason: string | null, @Ctx() ctx: MessagingContext) {
    return ctx.organizations.resume(id, reason);
  }

  @Mutation(() => Organization, { description: 'Platform admin: renames a tenant and/or replaces its settings (limits included); audited.' })
  updateOrganization(
    @Arg('id', () => ID) id: string,
    @Arg('name', () => String, { nullable: true }) name: string | null,
    @Arg('settings', () => OrganizationSettingsInput, { nullable: true }) settings: OrganizationSettingsInput | null,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: MessagingContext,
  ) {
    return ctx.organizations.updateSettings(id, { name, settings: settingsOf(settings) }, reason);
  }

  @FieldResolver(() => OrganizationSettingsView)
  settings(@Root() organization: OrganizationView) {
    const { rateLimits, supportEmail, reminderLeadMinutes, reminderLeadTimes } = organization.settings;
    return {
      rateLimits: Object.entries(rateLimits).map(([category, limit]) => ({ category, limit })),
      supportEmail: supportEmail ?? null,
      reminderLeadMinutes: reminderLeadMinutes ?? null,
      reminderLeadTimes: reminderLeadTimes ?? null,
      retention: retentionOverrides(organization.settings),
      // By language: the stored JSON keeps no order.
      replyKeywords: Object.entries(organization.settings.replyKeywords ?? {})
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([language, sets]) => ({
          language,
          optOut: [...(sets.optOut ?? [])],
          optIn: [...(sets.optIn ?? [])],
          help: [...(sets.help ?? [])],
        })),
    };
  }

  @FieldResolver(() => [RateLimitInForceView], { description: 'The limit of every category for this tenant now.' })
  rateLimits(@Root() organization: OrganizationView, @Ctx() ctx: MessagingContext) {
    return ctx.organizations.rateLimitsInForce(organization);
  }

  @FieldResolver(() => OrganizationHealth, { description: 'Webhook health, open alerts and message volume of the last day (support, admin, platform admin).' })
  health(@Root() organization: OrganizationView, @Ctx() ctx: MessagingContext) {
    return ctx.organizations.health(organization.id);
  }

  @FieldResolver(() => OrganizationActivity, {
    description: 'Calls this minute per category, recent errors and recent callers (support, admin, platform admin).',
  })
  async activity(@Root() organization: OrganizationView, @Ctx() ctx: MessagingContext) {
    const { usage, recentErrors, recentCallers } = await ctx.organizations.activity(organization.id);
    return {
      usage,
      recentErrors: recentErrors.map(({ sub, at, ...rest }) => ({ ...rest, at: new Date(at), subject: sub })),
      recentCallers: recentCallers.map(({ sub, roles, lastSeenAt }) => ({ subject: sub, roles, lastSeenAt: new Date(lastSeenAt) })),
    };
  }

  @FieldResolver(() => [OrganizationChangeView], { description: 'The change log, newest first (whoever may read the organisation).' })
  changes(@Root() organization: OrganizationView, @Arg('limit', () => Int, { nullable: true }) limit: number | null, @Ctx() ctx: MessagingContext) {
    return ctx.organizations.changes(organization.id, limit ?? undefined);
  }
}
