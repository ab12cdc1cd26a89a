import { TENANT_ID, type Identity } from '../../../common/auth/principal';
import { RATE_LIMIT_CATEGORIES, type RateLimitCategory } from '../../../common/config';
import { conflictOnDuplicate } from '../../../common/db/unique-violation';
import { tenantClient } from '../../../common/db/tenant-session';
import { AppError, notFound, validationError, type ErrorDetail } from '../../../common/errors';
import type { EventBus } from '../../../common/events/bus';
import type { TenantActivity } from '../../../common/activity/tenant-activity';
import { newEventId } from '../../../common/events/types';
import type { MessagingPrisma } from '../db/client';
import type { Organization as OrganizationRow, Prisma } from '../db/generated/client';
import { assertCan, assertCanReadOrganization } from '../policy/rules';
import { webhookHealth } from '../webhooks/webhook.service';
import { parseSettings, type OrganizationSettings } from './settings';

type OrganizationStatus = 'active' | 'suspended';
/** The capabilities by which a tenant admin manages part of their own tenant's settings. */
type TenantSettingCapability = 'manageReminderSettings' | 'manageRetention' | 'manageReplyKeywords';

export interface OrganizationView {
  id: string;
  name: string;
  status: OrganizationStatus;
  settings: OrganizationSettings;
  createdAt: Date;
  updatedAt: Date;
}

export interface RateLimitInForce {
  category: RateLimitCategory;
  limit: number;
  /** Whether the limit is this tenant's own (arranged with the provider) rather than the deployment's. */
  overridden: boolean;
}

export interface OrganizationDeps {
  prisma: MessagingPrisma;
  events: EventBus;
  /** The deployment's per-minute limits (RATE_LIMIT_<CATEGORY>), which a tenant's settings override. */
  rateLimits: Record<RateLimitCategory, number>;
  activity?: TenantActivity;
  now?: () => Date;
}

/** How far back the support view counts messages and failures. */
const HEALTH_WINDOW_MS = 24 * 60 * 60 * 1000;
const MAX_NAME = 200;
const MAX_REASON = 500;

function toView(row: OrganizationRow): OrganizationView {
  return {
    id: row.id,
    name: row.name,
    status: row.status as OrganizationStatus,
    settings: parseSettings(row.settings),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function checkReason(reason: string | null | undefined): string | null {
  if (reason == null || reason === '') return null;
  if (reason.length > MAX_REASON) throw validationError('Invalid reason', [{ path: 'reason', message: `at most ${MAX_REASON} characters` }]);
  return reason;
}

/**
 * Tenants as records (docs/tenants.md): a platform admin creates, suspends and
 * resumes them and sets their settings (limits included); every change is
 * written to the append-only OrganizationChange log and announced on the
 * event bus, so every gateway drops its cached copy at once. Support staff and
 * a tenant's admins read their own organisation with its operational health.
 */
export class OrganizationService {
  constructor(
    private readonly deps: OrganizationDeps,
    private readonly identity: Identity,
  ) {}

  private get prisma(): MessagingPrisma {
    return this.deps.prisma;
  }

  async list(): Promise<OrganizationView[]> {
    assertCan(this.identity, 'manageTenants');
    return (await this.prisma.organization.findMany({ orderBy: { id: 'asc' } })).map(toView);
  }

  async get(id: string): Promise<OrganizationView> {
    assertCanReadOrganization(this.identity, id);
    const row = await this.prisma.organization.findUnique({ where: { id } });
    if (!row) throw notFound('Organisation', id);
    return toView(row);
  }

  async create(input: { id: string; name: string; settings?: unknown; reason?: string | null }): Promise<OrganizationView> {
    assertCan(this.identity, 'manageTenants');
    const details: ErrorDetail[] = [];
    if (!TENANT_ID.test(input.id)) details.push({ path: 'id', message: '1-64 letters, digits, _ . - (starting with a letter or digit)' });
    if (!input.name?.trim() || input.name.length > MAX_NAME) details.push({ path: 'name', message: `required, at most ${MAX_NAME} characters` });
    if (details.length > 0) throw validationError('Invalid organisation', details);
    const settings = parseSettings(input.settings);
    const reason = checkReason(input.reason);
    const row = await this.prisma
      .$transaction(async (tx) => {
        const created = await tx.organization.create({ data: { id: input.id, name: input.name.trim(), settings: settings } });
        await this.audit(tx, created.id, 'create', null, toView(created), reason);
        return created;
      })
      .catch((err: unknown) => conflictOnDuplicate(err, `Organisation '${input.id}' already exists`));
    await this.announce(row);
    return toView(row);
  }

  suspend(id: string, reason?: string | null): Promise<OrganizationView> {
    return this.change(id, 'suspend', { status: 'suspended' }, reason);
  }

  resume(id: string, reason?: string | null): Promise<OrganizationView> {
    return this.change(id, 'resume', { status: 'active' }, reason);
  }

  /** Replaces the settings (validated whole); limits left out fall back to the deployment's. */
  updateSettings(id: string, input: { name?: string | null; settings?: unknown }, reason?: string | null): Promise<OrganizationView> {
    if (input.name != null && (!input.name.trim() || input.name.length > MAX_NAME)) {
      throw validationError('Invalid organisation', [{ path: 'name', message: `at most ${MAX_NAME} characters` }]);
    }
    const data: Prisma.OrganizationUpdateInput = {};
    if (input.name != null) data.name = input.name.trim();
    if (input.settings !== undefined && input.settings !== null) data.settings = parseSettings(input.settings);
    if (Object.keys(data).length === 0) throw validationError('Nothing to change: give name or settings');
    return this.change(id, 'update', data, reason);
  }

  private change(id: string, action: 'suspend' | 'resume' | 'update', data: Prisma.OrganizationUpdateInput, reason?: string | null) {
    assertCan(this.identity, 'manageTenants');
    return this.write(id, action, () => data, reason);
  }

  /** The caller's own tenant's settings, for a tenant admin's view of the part they manage. */
  async ownSettings(capability: TenantSettingCapability): Promise<OrganizationSettings> {
    assertCan(this.identity, capability);
    const row = await this.prisma.organization.findUnique({ where: { id: this.identity.tenantId } });
    if (!row) throw notFound('Organisation', this.identity.tenantId);
    return parseSettings(row.settings);
  }

  /**
   * A tenant admin changes the part of their own tenant's settings they manage (reminder lead time, messaging
   * retention): the same record, the same validation and the same change log as a platform admin's update.
   */
  async updateOwnSettings(
    capability: TenantSettingCapability,
    edit: (settings: OrganizationSettings) => OrganizationSettings,
    reason?: string | null,
  ): Promise<OrganizationSettings> {
    assertCan(this.identity, capability);
    const row = await this.write(this.identity.tenantId, 'update', (current) => ({ settings: parseSettings(edit(parseSettings(current.settings))) }), reason);
    return row.settings;
  }

  private async write(
    id: string,
    action: 'suspend' | 'resume' | 'update',
    data: (current: OrganizationRow) => Prisma.OrganizationUpdateInput,
    reason?: string | null,
  ) {
    const why = checkReason(reason);
    const row = await this.prisma.$transaction(async (tx) => {
      // FOR UPDATE: two admins changing one tenant at once are logged in the order they happened.
      const locked = await tx.$queryRaw<OrganizationRow[]>`SELECT * FROM "messaging"."Organization" WHERE id = ${id} FOR UPDATE`;
      if (locked.length === 0) throw notFound('Organisation', id);
      const updated = await tx.organization.update({ where: { id }, data: data(locked[0]) });
      await this.audit(tx, id, action, toView(locked[0]), toView(updated), why);
      return updated;
    });
    await this.announce(row);
    return toView(row);
  }

  /** The limits this tenant's callers get, per category: its own where set, else the deployment's. */
  rateLimitsInForce(organization: OrganizationView): RateLimitInForce[] {
    return (Object.keys(RATE_LIMIT_CATEGORIES) as RateLimitCategory[]).map((category) => {
      const own = organization.settings.rateLimits[category];
      return { category, limit: own ?? this.deps.rateLimits[category], overridden: own !== undefined };
    });
  }

  /**
   * The tenant's API activity as the gateways record it: calls this minute per
   * category (all callers), the latest errors, the callers seen in the last day.
   * SERVICE_UNAVAILABLE when this deployment keeps no such record.
   */
  async activity(id: string) {
    assertCanReadOrganization(this.identity, id);
    if (!this.deps.activity) throw new AppError('SERVICE_UNAVAILABLE', 'This service keeps no record of API activity');
    const snapshot = await this.deps.activity.read(id);
    const counted = new Map(snapshot.usage.map((u) => [u.category, u.count]));
    return {
      ...snapshot,
      usage: (Object.keys(RATE_LIMIT_CATEGORIES) as RateLimitCategory[]).map((category) => ({ category, count: counted.get(category) ?? 0 })),
    };
  }

  /**
   * The change log of one organisation, newest first: whoever reads the organisation (platform admins any,
   * its support staff and admins their own) sees who changed its status, limits and settings, and why.
   */
  async changes(id: string, limit = 50) {
    assertCanReadOrganization(this.identity, id);
    return this.prisma.organizationChange.findMany({
      where: { organizationId: id },
      orderBy: [{ at: 'desc' }, { id: 'desc' }],
      take: Math.min(Math.max(limit, 1), 200),
    });
  }

  /**
   * What is going wrong for a tenant, without patient data: webhook subscriptions
   * with their health, open alerts (of subscriptions still disabled), and message
   * volume, statuses and failure reasons over the last day.
   */
  async health(id: string) {
    assertCanReadOrganization(this.identity, id);
    const tenant = tenantClient(this.prisma, id);
    const since = new Date((this.deps.now?.() ?? new Date()).getTime() - HEALTH_WINDOW_MS);
    const [subscriptions, alerts, byStatus, failures] = await Promise.all([
      tenant.webhookSubscription.findMany({ where: { tenantId: id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
      tenant.alert.findMany({ where: { tenantId: id }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 100 }),
      tenant.message.groupBy({ by: ['status'], where: { tenantId: id, createdAt: { gte: since } }, _count: { _all: true } }),
      tenant.message.groupBy({ by: ['error'], where: { tenantId: id, createdAt: { gte: since }, status: 'failed' }, _count: { _all: true } }),
    ]);
    const webhooks = await Promise.all(
      subscriptions.map(async (s) => {
        const [health, lastAttempt] = await Promise.all([
          webhookHealth(tenant, id, s.id),
          tenant.webhookAttempt.findFirst({ where: { tenantId: id, delivery: { subscriptionId: s.id } }, orderBy: { at: 'desc' } }),
        ]);
        return {
          id: s.id,
          url: s.url,
          events: s.events,
          status: s.status,
          disabledAt: s.disabledAt,
          disabledReason: s.disabledReason,
          ...health,
          lastAttemptAt: lastAttempt?.at ?? null,
          lastAttemptStatusCode: lastAttempt?.statusCode ?? null,
          lastAttemptSucceeded: lastAttempt?.success ?? null,
        };
      }),
    );
    const disabled = new Set(subscriptions.filter((s) => s.status === 'disabled').map((s) => s.id));
    const openAlerts = alerts
      .filter((a) => a.webhookId !== null && disabled.has(a.webhookId))
      .map((a) => ({ id: a.id, type: a.type, webhookId: a.webhookId, message: a.message, createdAt: a.createdAt }));
    const statusCounts = byStatus.map((g) => ({ key: g.status, count: g._count._all })).sort((a, b) => b.count - a.count);
    const failureReasons = failures.map((g) => ({ key: g.error ?? '(no reason recorded)', count: g._count._all })).sort((a, b) => b.count - a.count);
    return {
      since,
      webhooks,
      openAlerts,
      messages: { total: statusCounts.reduce((sum, s) => sum + s.count, 0), byStatus: statusCounts, failureReasons },
    };
  }

  private async audit(
    tx: Prisma.TransactionClient,
    organizationId: string,
    action: string,
    before: OrganizationView | null,
    after: OrganizationView,
    reason: string | null,
  ) {
    await tx.organizationChange.create({
      data: {
        organizationId,
        actor: this.identity.sub,
        action,
        before: before ? (JSON.parse(JSON.stringify(before)) as Prisma.InputJsonValue) : undefined,
        after: JSON.parse(JSON.stringify(after)) as Prisma.InputJsonValue,
        reason,
      },
    });
  }

  /** Tells every gateway (the event bus: Redis pub/sub when configured) to drop its cached copy of this tenant. */
  private async announce(row: OrganizationRow): Promise<void> {
    await this.deps.events.publish({
      id: newEventId(),
      type: 'tenant.changed',
      timestamp: new Date().toISOString(),
      tenantId: row.id,
      data: { status: row.status },
    });
  }
}

/**
 * Makes sure each tenant the deployment names (TENANTS) exists as a record,
 * created active when missing; an existing record (a suspended one too) is
 * left as it is. This seeds the demo tenants and bootstraps a production deployment.
 */
export async function ensureOrganizations(prisma: MessagingPrisma, tenantIds: readonly string[]): Promise<string[]> {
  const created: string[] = [];
  for (const id of tenantIds) {
    const rows = await prisma.$executeRaw`
      INSERT INTO "messaging"."Organization" (id, name, status, settings, "updatedAt") VALUES (${id}, ${id}, 'active', '{}', now())
      ON CONFLICT (id) DO NOTHING`;
    if (rows > 0) {
      created.push(id);
      await prisma.organizationChange.create({
        data: { organizationId: id, actor: 'system:bootstrap', action: 'create', after: { id, status: 'active' }, reason: 'TENANTS' },
      });
    }
  }
  return created;
}
