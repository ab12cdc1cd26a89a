import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PURPOSES_OF_USE } from '../../common/auth/purpose-of-use';
import { TENANT_ID } from '../../common/auth/principal';
import type { AgentQuery } from './server';
import { answer, budget, guarded, maxBytes } from './tool-result';

/**
 * The support desk's tools: who the caller is and what is going wrong for an
 * organisation, never patient data. Each tool is one GraphQL operation
 * (`viewer`, `organization`) as the calling agent, so the messaging policy
 * point decides who may read which organisation, as it does for the web.
 *
 * They take no purpose of use: a purpose is what the clinical record's access
 * log records for a read of patient data, and these read none. The agent
 * context still needs one, and operations (HOPERAT) is the only one that
 * describes running the service.
 */
const SUPPORT_PURPOSE = PURPOSES_OF_USE.operations;

const viewer = {
  subject: z.string().describe("The token's subject"),
  roles: z.array(z.string()),
  tenants: z.array(z.string()).describe('Every tenant the token grants'),
  tenantId: z.string().describe('The tenant this call acts in'),
  tokenExpiresAt: z.string().nullable(),
};

const countByKey = z.array(z.object({ key: z.string(), count: z.number() }));
const health = {
  organization: z.object({
    id: z.string(),
    name: z.string(),
    status: z.string().describe('active | suspended'),
    supportEmail: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  }),
  limits: z
    .array(z.object({ category: z.string(), limit: z.number(), overridden: z.boolean(), usedThisMinute: z.number() }))
    .describe("Per-minute limit of each category in force (overridden: the tenant's own) and the calls of all its callers this minute"),
  webhooks: z.array(
    z.object({
      id: z.string(),
      url: z.string(),
      events: z.array(z.string()),
      status: z.string().describe('active | disabled'),
      disabledAt: z.string().nullable(),
      disabledReason: z.string().nullable(),
      failureStreak: z.number().describe('Failed attempts since the last success'),
      lastFailureAt: z.string().nullable(),
      lastFailureError: z.string().nullable(),
      lastAttemptAt: z.string().nullable(),
      lastAttemptStatusCode: z.number().nullable(),
      lastAttemptSucceeded: z.boolean().nullable(),
    }),
  ),
  openAlerts: z.array(z.object({ id: z.string(), type: z.string(), webhookId: z.string().nullable(), message: z.string(), createdAt: z.string() })),
  messages: z
    .object({ since: z.string(), total: z.number(), byStatus: countByKey, failureReasons: countByKey })
    .describe('Messages created since `since` (the last 24 hours): counts by status and failure reason'),
  recentErrors: z
    .array(z.object({ at: z.string(), code: z.string(), message: z.string(), operation: z.string(), subject: z.string(), requestId: z.string() }))
    .describe("Latest errors of the tenant's API calls, newest first; requestId finds the call in the logs"),
  recentCallers: z.array(z.object({ subject: z.string(), roles: z.array(z.string()), lastSeenAt: z.string() })).describe('Newest first'),
  budget,
};

const ORGANIZATION_HEALTH = `query McpOrganizationHealth($id: ID!) {
  organization(id: $id) {
    id name status createdAt updatedAt settings { supportEmail }
    rateLimits { category limit overridden }
    health {
      since
      webhooks { id url events status disabledAt disabledReason failureStreak lastFailureAt lastFailureError lastAttemptAt lastAttemptStatusCode lastAttemptSucceeded }
      openAlerts { id type webhookId message createdAt }
      messages { total byStatus { key count } failureReasons { key count } }
    }
    activity { usage { category count } recentErrors { at code message operation subject requestId } recentCallers { subject roles lastSeenAt } }
  }
}`;

export function registerSupportTools(server: McpServer, query: AgentQuery): void {
  server.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description:
        'The caller as the platform reads the token: subject, roles, the tenants it grants, the tenant this call acts in, and when the token expires.',
      inputSchema: {},
      outputSchema: viewer,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () =>
      guarded(async () => {
        const data = await query<{ viewer: Record<string, unknown> }>(
          { tool: 'whoami', purpose: SUPPORT_PURPOSE },
          'query McpWhoami { viewer { subject roles tenants tenantId tokenExpiresAt } }',
        );
        return answer(data.viewer);
      }),
  );

  server.registerTool(
    'organization_health',
    {
      title: 'Organisation health',
      description:
        "What is going wrong for an organisation, without patient data: its profile, the rate limits in force with this minute's usage, webhook subscriptions with failure streaks and why disabled ones stopped, open alerts, the last day's message failures by reason, and recent API errors and callers. Support staff and admins read their own organisation; another one is NOT_FOUND.",
      inputSchema: {
        organizationId: z.string().regex(TENANT_ID).describe('The organisation (tenant) id, e.g. demo; whoami lists yours'),
        maxBytes,
      },
      outputSchema: health,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const { organization: org } = await query<{ organization: Record<string, any> }>(
          { tool: 'organization_health', purpose: SUPPORT_PURPOSE },
          ORGANIZATION_HEALTH,
          { id: args.organizationId },
        );
        const used = new Map<string, number>(org.activity.usage.map((u: { category: string; count: number }) => [u.category, u.count]));
        return answer(
          {
            organization: {
              id: org.id,
              name: org.name,
              status: org.status,
              supportEmail: org.settings.supportEmail,
              createdAt: org.createdAt,
              updatedAt: org.updatedAt,
            },
            limits: org.rateLimits.map((l: { category: string }) => ({ ...l, usedThisMinute: used.get(l.category) ?? 0 })),
            webhooks: org.health.webhooks,
            openAlerts: org.health.openAlerts,
            messages: { since: org.health.since, ...org.health.messages },
            recentErrors: org.activity.recentErrors,
            recentCallers: org.activity.recentCallers,
          },
          args.maxBytes,
        );
      }),
  );
}
