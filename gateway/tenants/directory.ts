import type { ApolloServer } from '@apollo/server';
import { randomUUID } from 'node:crypto';
import { PLATFORM_SCOPE, type Identity } from '../../common/auth/principal';
import { ALL_TENANTS, SYSTEM_SUBJECTS } from '../../common/auth/system-identities';
import type { RateLimitCategory } from '../../common/config';
import { AppError } from '../../common/errors';
import type { EventBus } from '../../common/events/bus';
import type { Logger } from '../../common/logger';
import type { GatewayContext } from '../context';

/** What the gateway needs of a tenant's record on every call. */
export interface TenantRecord {
  id: string;
  status: 'active' | 'suspended';
  /** The tenant's own per-minute limits; categories not listed use the deployment's. */
  rateLimits: Partial<Record<RateLimitCategory, number>>;
}

export type TenantLookup = (id: string) => Promise<TenantRecord | null>;

/**
 * How long a tenant's record is served from memory. A change is announced on
 * the event bus (Redis pub/sub with REDIS_URL) and drops the copy at once on
 * every gateway; this bound only matters when such a message is lost.
 */
const TENANT_CACHE_MS = 30_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  value: Promise<TenantRecord | null>;
  until: number;
}

/**
 * The gateway's view of the tenants as records (docs/tenants.md): every call
 * of every surface (REST, GraphQL, FHIR, openEHR, WebSocket, and whatever reuses
 * `admit`) is refused with 403 FORBIDDEN when its tenant does not exist or is
 * suspended.
 */
export class TenantDirectory {
  private readonly cache = new Map<string, Entry>();
  private readonly listeners = new Set<(tenantId: string, status: string | undefined) => void>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly lookup: TenantLookup,
    bus: EventBus,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribe = bus.subscribe((event) => {
      if (event.type !== 'tenant.changed') return;
      this.cache.delete(event.tenantId);
      const status = (event.data as { status?: unknown }).status;
      for (const listener of this.listeners) listener(event.tenantId, typeof status === 'string' ? status : undefined);
    });
  }

  /**
   * The record of the tenant the caller acts in; FORBIDDEN when it is unknown
   * or suspended. The platform scope (a platform admin acting in no tenant) has
   * no record and is admitted: its policy grants only tenant management.
   */
  async admit(identity: Pick<Identity, 'tenantId'>): Promise<TenantRecord | undefined> {
    if (identity.tenantId === PLATFORM_SCOPE) return undefined;
    const record = await this.get(identity.tenantId);
    if (!record) throw new AppError('FORBIDDEN', `Tenant '${identity.tenantId}' is not served here`);
    if (record.status !== 'active') throw new AppError('FORBIDDEN', `Tenant '${identity.tenantId}' is suspended`);
    return record;
  }

  /** Called with each tenant whose record changed (on any instance), and its new status. */
  onChange(listener: (tenantId: string, status: string | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.unsubscribe();
    this.listeners.clear();
  }

  private get(id: string): Promise<TenantRecord | null> {
    const at = this.now();
    const hit = this.cache.get(id);
    if (hit && hit.until > at) return hit.value;
    if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    const entry = { value: this.lookup(id), until: at + TENANT_CACHE_MS };
    this.cache.set(id, entry);
    // A failed lookup is not remembered: the next call asks again.
    entry.value.catch(() => {
      if (this.cache.get(id) === entry) this.cache.delete(id);
    });
    return entry.value;
  }
}

const LOOKUP = 'query TenantAccess($id: ID!) { organization(id: $id) { id status settings { rateLimits { category limit } } } }';

/**
 * Reads a tenant's record through the gateway's own graph, as the reserved
 * `system:gateway` identity (the messaging policy point lets it read any
 * tenant's status and limits, nothing else). Not a client call: no budget spent.
 */
export function graphTenantLookup(apollo: ApolloServer<GatewayContext>, logger: Logger): TenantLookup {
  const identity: Identity = { sub: SYSTEM_SUBJECTS.gateway, tenantId: ALL_TENANTS, roles: [] };
  return async (id) => {
    const requestId = randomUUID();
    const response = await apollo.executeOperation<{
      organization: { id: string; status: string; settings: { rateLimits: { category: string; limit: number }[] } };
    }>(
      { query: LOOKUP, variables: { id } },
      { contextValue: { principal: { sub: identity.sub, tenants: [], roles: [] }, identity, requestId, logger: logger.child({ requestId }) } },
    );
    if (response.body.kind !== 'single') throw new AppError('INTERNAL_ERROR', 'Unexpected incremental response');
    const { data, errors } = response.body.singleResult;
    if (errors?.some((e) => e.extensions?.code === 'NOT_FOUND')) return null;
    if (errors?.length || !data?.organization) {
      const code = errors?.[0]?.extensions?.code;
      throw new AppError(code === 'SERVICE_UNAVAILABLE' ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_ERROR', 'The tenant directory could not be read');
    }
    const { organization } = data;
    return {
      id: organization.id,
      status: organization.status === 'active' ? 'active' : 'suspended',
      rateLimits: Object.fromEntries(organization.settings.rateLimits.map((r) => [r.category, r.limit])),
    };
  };
}
